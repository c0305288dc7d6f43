package dashboard

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/services/ops/clusterview"
	"google.golang.org/protobuf/encoding/protojson"
)

// TestPageAndSnapshot: the page is served from the binary with nothing
// fetched from elsewhere, and the snapshot as JSON with proto names.
func TestPageAndSnapshot(t *testing.T) {
	h := Handler(func(context.Context) *wololov1.ClusterGetResponse {
		return &wololov1.ClusterGetResponse{Streams: []*wololov1.ClusterStream{{Name: "matches", RowsPerSecond: 12.5}}}
	})
	get := func(path string) (string, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		b, _ := io.ReadAll(rec.Body)
		if rec.Code != 200 {
			t.Fatalf("GET %s: %d %s", path, rec.Code, b)
		}
		return rec.Header().Get("Content-Type"), string(b)
	}
	ctype, page := get("/")
	if !strings.HasPrefix(ctype, "text/html") || !strings.Contains(page, `fetch("api/cluster"`) {
		t.Errorf("/: %s\n%.300s", ctype, page)
	}
	// The policy allows the one inline script and the one style by hash,
	// and the page has nothing else inline that the policy would block.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	policy := rec.Header().Get("Content-Security-Policy")
	if policy != PagePolicy || !regexp.MustCompile(`^default-src 'none'; script-src 'sha256-[A-Za-z0-9+/]{43}='; style-src 'sha256-[A-Za-z0-9+/]{43}='; connect-src 'self';`).MatchString(policy) {
		t.Errorf("the page's policy: %q", policy)
	}
	if m := regexp.MustCompile(`(?i)\sstyle=|\son[a-z]+=|javascript:|<script [^>]*src`).FindString(page); m != "" {
		t.Errorf("the page has %q, which its policy blocks", m)
	}
	if pagePolicy([]byte("<p>")) != "default-src 'none'; script-src 'none'; style-src 'none'; connect-src 'self'; img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'" {
		t.Errorf("a page without inline script: %q", pagePolicy([]byte("<p>")))
	}
	for _, outside := range []string{"http://", "https://", "//cdn", "<link"} {
		if strings.Contains(strings.ReplaceAll(page, `"http://www.w3.org/2000/svg"`, ""), outside) {
			t.Errorf("the page refers to something outside the binary: %q", outside)
		}
	}
	ctype, js := get("/api/cluster")
	var got wololov1.ClusterGetResponse
	if err := protojson.Unmarshal([]byte(js), &got); ctype != "application/json" || err != nil {
		t.Fatalf("/api/cluster: %s, %v\n%s", ctype, err, js)
	}
	if len(got.GetStreams()) != 1 || got.GetStreams()[0].GetRowsPerSecond() != 12.5 {
		t.Errorf("/api/cluster: %v", &got)
	}
	if !strings.Contains(js, `"rows_per_second"`) { // the names the page reads
		t.Errorf("/api/cluster does not use the proto field names:\n%s", js)
	}
}

// TestQueriesColumn: the jobs table has a queries column, whose label is
// clusterview.QueriesLabel's (what `wololo top` shows), checked by running
// the page's function with node when there is one.
func TestQueriesColumn(t *testing.T) {
	html := string(page)
	if !strings.Contains(html, "<th>client</th><th>queries</th>") || !strings.Contains(html, "queriesLabel(j.queries)") {
		t.Fatal("the jobs table has no queries column")
	}
	start := strings.Index(html, "function queriesLabel(")
	if start < 0 {
		t.Fatal("the page has no function queriesLabel")
	}
	end := strings.Index(html[start:], "\n}\n")
	if end < 0 {
		t.Fatal("the page's function queriesLabel has no end")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node to run the page's queriesLabel with")
	}
	cases := [][]string{
		clusterview.DefaultQueries, {"q1", "q2"}, {"civs", "by-map"}, {"x"},
		{"a_rather_long_query_name", "another_long_one", "third", "fourth"},
		{"aaaaaaaaaa", "bbbbbbbbbb", "cccccccccc", "ddddddd", "e"},
		{"aaaaaaaaaa", "bbbbbbbbbb", "cccccccccc", "dddddddd", "e"},
	}
	in, _ := json.Marshal(cases)
	script := html[start:start+end+2] + "console.log(JSON.stringify(" + string(in) + ".map(queriesLabel)));"
	out, err := exec.Command(node, "-e", script).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var got []string
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(cases) {
		t.Fatalf("node printed %q (%v)", out, err)
	}
	for i, c := range cases {
		if want := clusterview.QueriesLabel(c); got[i] != want {
			t.Errorf("queriesLabel(%q) = %q on the page, %q in top", c, got[i], want)
		}
	}
}
