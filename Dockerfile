# The release image (GoReleaser dockers_v2 copies the linux binaries under
# $TARGETPLATFORM/). Alpine, not distroless: perfgate runs git for ingest,
# run, check, compare, sync and bisect, so the image carries git.
FROM alpine:3.22
ARG TARGETPLATFORM
RUN apk add --no-cache git ca-certificates
# A repository mounted from the host belongs to another uid; without this
# git refuses it ("detected dubious ownership").
ENV GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0=*
COPY $TARGETPLATFORM/perfgate /usr/bin/perfgate
WORKDIR /repo
ENTRYPOINT ["/usr/bin/perfgate"]
