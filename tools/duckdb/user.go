package main

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"os"
	"strings"
)

// Query is a query file of --query NAME=FILE: its answer is NAME.csv.
type Query struct {
	Name, Path string
}

// ParseQuery reads a --query value, NAME=FILE: NAME is 1 to 64 letters,
// digits, '_' or '-', as a query's name is in a Wololo job.
func ParseQuery(s string) (Query, error) {
	name, path, ok := strings.Cut(s, "=")
	if !ok || path == "" {
		return Query{}, fmt.Errorf("--query %q: want NAME=FILE", s)
	}
	if name == "" || len(name) > 64 || strings.HasPrefix(name, "-") || strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
		return Query{}, fmt.Errorf("--query %q: NAME is 1 to 64 letters, digits, _ or -, not starting with -", s)
	}
	return Query{Name: name, Path: path}, nil
}

//go:embed user.sql
var userSQL string

// loadUser loads tables matches and match_players as user.sql does (a
// plain user's load: read_csv, the columns of docs/queries.md's kinds
// cast with try_cast), the paths given as the variables it reads, and
// returns the statements of the query files, each answering NAME.csv.
func loadUser(ctx context.Context, conn *sql.Conn, matches, players string, queries []Query) ([]statement, error) {
	var stmts []statement
	for _, q := range queries {
		text, err := os.ReadFile(q.Path)
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", q.Name, err)
		}
		stmts = append(stmts, statement{file: q.Name + ".csv", text: string(text)})
	}
	vars := "SET VARIABLE matches = " + sqlString(matches) + "; SET VARIABLE players = " + sqlString(players) + ";"
	if _, err := conn.ExecContext(ctx, vars); err != nil {
		return nil, fmt.Errorf("setting the input paths: %w", err)
	}
	if _, err := conn.ExecContext(ctx, userSQL); err != nil {
		return nil, fmt.Errorf("loading %s and %s: %w", matches, players, err)
	}
	return stmts, nil
}
