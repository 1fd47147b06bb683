package proc

import (
	"slices"
	"testing"
)

func TestWithoutSecrets(t *testing.T) {
	in := []string{"PATH=/bin", "GITHUB_TOKEN=ghs_x", "GH_TOKEN=gho_x", "PERFGATE_GITHUB_TOKEN=x", "perfgate_github_token=x",
		"PERFGATE_SYNC_TOKEN=x", "GH_ENTERPRISE_TOKEN=x", "GITHUB_ENTERPRISE_TOKEN=x", "PERFGATE_DB=h.db", "GITHUB_SHA=abc", "HF_TOKEN=hf_x", "NOEQUALS",
		"PGPASSWORD=pw", "PERFGATE_DB=postgres://u:pw@db/h", "DATABASE_URL=postgresql://u@db/h?password=pw", "PGHOST=db", "OTHER=postgres://u@db/h",
		"PERFGATE_DB=postgres://u@db/h?sslpassword=keypw", "PGSSLPASSWORD=keypw"}
	want := []string{"PATH=/bin", "PERFGATE_DB=h.db", "GITHUB_SHA=abc", "HF_TOKEN=hf_x", "NOEQUALS", "PGHOST=db", "OTHER=postgres://u@db/h"}
	if got := WithoutSecrets(in); !slices.Equal(got, want) {
		t.Errorf("WithoutSecrets = %q, want %q", got, want)
	}
}
