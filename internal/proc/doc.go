// Package proc owns how perfgate runs a user's benchmark command (perfgate
// run, bisect): in a process group of its own, so that Ctrl-C or a
// cancelled context stops everything the command started, with a grace
// period between SIGTERM and SIGKILL; and with an environment without the
// tokens perfgate reads (Environ), which a benchmark never needs, while
// perfgate's own environment is kept from it too (Undumpable). It also
// reads the CPU time a process has used (CPUTime), which benchmarks on a
// loaded machine report beside wall time.
package proc
