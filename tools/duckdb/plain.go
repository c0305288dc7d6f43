package main

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"strings"
)

//go:embed plain.sql
var plainSQL string

// loadPlain loads tables m and p as plain.sql's first statement does,
// the paths given as the variables it reads, and returns the four queries
// that follow it.
func loadPlain(ctx context.Context, conn *sql.Conn, matches, players string) ([]string, error) {
	stmts := strings.Split(plainSQL, "\n-- next\n")
	vars := "SET VARIABLE matches = " + sqlString(matches) + "; SET VARIABLE players = " + sqlString(players) + ";"
	if _, err := conn.ExecContext(ctx, vars); err != nil {
		return nil, fmt.Errorf("setting the input paths: %w", err)
	}
	if _, err := conn.ExecContext(ctx, stmts[0]); err != nil {
		return nil, fmt.Errorf("loading %s and %s: %w", matches, players, err)
	}
	return stmts[1:], nil
}
