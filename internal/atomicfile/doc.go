// Package atomicfile writes a file so that it appears whole or not at all:
// into a temporary file beside it, then renamed into place.
package atomicfile
