// Package registry is the one shape every registry of the lab has: values
// a package adds from its init function (a store, its errors, its bench),
// read back as a copy in the order added.
//
// registry.go is List, the registry.
package registry
