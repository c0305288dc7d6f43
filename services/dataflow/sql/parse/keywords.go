package parse

// PostgreSQL's reserved key words (its documentation's appendix "SQL Key
// Words", PostgreSQL 17): reserved ones are never a name unquoted;
// typeFunc ones may name a function (left(...)) but not a column or a
// table. Every other word is a plain name, though it be a key word
// elsewhere: match, rank, server, map, year, text, value.
var reserved = setOf("all", "analyse", "analyze", "and", "any", "array", "as", "asc", "asymmetric", "both",
	"case", "cast", "check", "collate", "column", "constraint", "create", "current_catalog", "current_date",
	"current_role", "current_time", "current_timestamp", "current_user", "default", "deferrable", "desc",
	"distinct", "do", "else", "end", "except", "false", "fetch", "for", "foreign", "from", "grant", "group",
	"having", "in", "initially", "intersect", "into", "lateral", "leading", "limit", "localtime",
	"localtimestamp", "not", "null", "offset", "on", "only", "or", "order", "placing", "primary", "references",
	"returning", "select", "session_user", "some", "symmetric", "system_user", "table", "then", "to",
	"trailing", "true", "union", "unique", "user", "using", "variadic", "when", "where", "window", "with")

var typeFunc = setOf("authorization", "binary", "collation", "concurrently", "cross", "current_schema",
	"freeze", "full", "ilike", "inner", "is", "isnull", "join", "left", "like", "natural", "notnull", "outer",
	"overlaps", "right", "similar", "tablesample", "verbose")

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// Reserved reports whether word (lower case) is one of PostgreSQL's
// reserved key words, which name a column or a table only when quoted.
func Reserved(word string) bool { return reserved[word] || typeFunc[word] }
