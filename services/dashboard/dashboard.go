// Package dashboard is the gateway's web page of the whole deployment: the
// topology as a graph (tasks as boxes coloured by health, the streams
// between them as arrows labelled with their rates), the jobs with their
// progress, the masters and every process. The page polls
// /api/cluster, a snapshot of services/clusterview in JSON, once a second;
// everything it needs is embedded in the binary (go:embed), no outside
// script, style or font.
//
// It only draws snapshots it is given; it gathers nothing itself.
package dashboard

import (
	"context"
	"embed"
	"io/fs"
	"net/http"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/clusterview"
)

//go:embed static
var static embed.FS

// Snapshot returns the deployment's current snapshot.
type Snapshot func(ctx context.Context) *wololov1.ClusterGetResponse

// Handler serves the page at / and the snapshot at /api/cluster.
func Handler(snapshot Snapshot) http.Handler {
	files, err := fs.Sub(static, "static")
	if err != nil {
		panic("dashboard: embedded files: " + err.Error())
	}
	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServerFS(files))
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
