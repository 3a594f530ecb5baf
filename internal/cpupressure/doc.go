// Package cpupressure reads how long the machine's tasks have waited for a
// CPU: Linux's pressure stall information for the CPU
// (/proc/pressure/cpu, its "some" line), the time during which at least one
// runnable task had no CPU to run on. Where the kernel does not give it
// (another platform, a kernel without PSI), Read says so.
//
// Where things are: cpupressure.go (Read, Parse, Sampler).
package cpupressure
