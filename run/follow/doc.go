// Package follow keeps the grants a store's sweep follows, the same way
// for every store: from a grant until the server ends it (its lease lost),
// something else takes it away (gone) or its client releases it. A
// store's watch embeds a Grant beside what it reads the grant by (a key
// and its value, a node and its creation, a session), and keeps its
// watches in a List.
package follow
