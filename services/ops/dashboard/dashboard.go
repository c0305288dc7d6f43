// Package dashboard is the gateway's web page of the whole deployment: the
// topology as a graph (tasks as boxes coloured by health, the streams
// between them as arrows labelled with their rates), the jobs with their
// progress, the masters and every process. The page polls
// /api/cluster, a snapshot of services/ops/clusterview in JSON, once a second;
// everything it needs is embedded in the binary (go:embed), no outside
// script, style or font.
//
// The page is one file with its script and style inline, so that opening
// it is one request: services/ops/admin serves it only to the operator, and a
// browser that opened /?token=TOKEN would send no token for a separate
// script file. Its Content-Security-Policy (PagePolicy) allows exactly that
// script and that style, by their SHA-256, and fetches from its own origin;
// nothing else, no inline event handler or style attribute, no frame. The
// page sends the token of its address as an Authorization header
// (services/ops/admin says why a token).
//
// It only draws snapshots it is given; it gathers nothing itself.
package dashboard

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/ops/clusterview"
)

//go:embed static/index.html
var page []byte

// PagePolicy is the page's Content-Security-Policy: its own inline script
// and style by hash, requests to its own origin, nothing else.
var PagePolicy = pagePolicy(page)

var inline = regexp.MustCompile(`(?s)<(script|style)>(.*?)</(?:script|style)>`)

// pagePolicy allows each inline <script> and <style> of html by its hash.
func pagePolicy(html []byte) string {
	var scripts, styles []string
	for _, m := range inline.FindAllSubmatch(html, -1) {
		sum := sha256.Sum256(m[2])
		src := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
		if string(m[1]) == "script" {
			scripts = append(scripts, src)
		} else {
			styles = append(styles, src)
		}
	}
	none := func(srcs []string) string {
		if len(srcs) == 0 {
			return "'none'"
		}
		return strings.Join(srcs, " ")
	}
	return fmt.Sprintf("default-src 'none'; script-src %s; style-src %s; connect-src 'self'; img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
		none(scripts), none(styles))
}

// Snapshot returns the deployment's current snapshot.
type Snapshot func(ctx context.Context) *wololov1.ClusterGetResponse

// Handler serves the page at / and the snapshot at /api/cluster.
func Handler(snapshot Snapshot) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", PagePolicy)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	})
	mux.HandleFunc("GET /api/cluster", func(w http.ResponseWriter, r *http.Request) {
		b, err := clusterview.JSON(snapshot(r.Context()))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(b)
	})
	return mux
}
