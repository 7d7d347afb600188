// Package cputime reads how much CPU time the process has used, the
// figure the benchmarks (cpu-ns/op, cpu-ms/op) and the big-catalog
// measurements report beside wall time: on a machine shared with other
// work, wall time includes the time spent waiting for a core, CPU time
// does not.
package cputime
