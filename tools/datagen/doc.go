// Package datagen is the `wololo datagen` command: it parses the flags,
// writes a dataset with the generator of services/base/datagen and prints a
// one-line summary. The generator itself, and everything said about the
// data, is in services/base/datagen.
package datagen
