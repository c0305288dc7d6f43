package physical_test

import (
	"strings"
	"testing"

	"github.com/wololo/wololo/deploy"
	"github.com/wololo/wololo/services/dataflow/sql"
	"github.com/wololo/wololo/services/dataflow/sql/physical"
)

// planOf is the plan of a job of one query on the default topology.
func planOf(t *testing.T, q string) *physical.Plan {
	t.Helper()
	root, err := sql.Compile(q, catalog())
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	p, err := physical.Build([]physical.Logical{{Name: "q", Plan: root}}, shape(t, deploy.Default()))
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return p
}

// TestShardLossOfTheDefaultQueries: the four default queries allow a
// shard to be rebuilt alone (every channel into the shards is the
// gateway's parsed input, none goes from shard to shard); q1's answer
// follows the matches the shard is sent (a distinct of them), so it may
// have been applied, but q2's, q3's and q4's come out of an aggregate
// and must not have been.
func TestShardLossOfTheDefaultQueries(t *testing.T) {
	l := defaultPlan(t).ShardLoss()
	if l.Whole != "" {
		t.Fatalf("Whole = %q, want a shard rebuilt alone", l.Whole)
	}
	want := map[string]string{"q1-to-gateway": "matches-by-token", "q2-to-gateway": "", "q3-to-gateway": "", "q4-to-gateway": ""}
	if len(l.Outputs) != len(want) {
		t.Fatalf("Outputs = %+v, want %v", l.Outputs, want)
	}
	for _, o := range l.Outputs {
		if f, ok := want[o.Channel]; !ok || f != o.Follows {
			t.Errorf("%s follows %q, want %q (listed: %v)", o.Channel, o.Follows, f, ok)
		}
	}
	for _, c := range []struct {
		applied map[string]uint64
		exact   bool
	}{
		{nil, true},
		{map[string]uint64{"q1-to-gateway": 7}, true},
		{map[string]uint64{"q1-to-gateway": 7, "q3-to-gateway": 1}, false},
		{map[string]uint64{"q2-to-gateway": 1}, false},
		{map[string]uint64{"q4-to-gateway": 0}, true},
	} {
		why := l.Exact(c.applied)
		if (why == "") != c.exact {
			t.Errorf("Exact(%v) = %q, want exact %v", c.applied, why, c.exact)
		}
	}
}

// TestShardLossNeedsTheWholeJob: a channel from shard to shard (a second
// shuffle by another key) and a standing job's plan each need the whole
// job run again, whatever was applied.
func TestShardLossNeedsTheWholeJob(t *testing.T) {
	q := "SELECT token FROM match_players WHERE match IN (SELECT token FROM matches WHERE map = 'arena') AND civ IN (SELECT civ FROM match_players WHERE rating > 2500)"
	l := planOf(t, q).ShardLoss()
	if !strings.Contains(l.Whole, "from shard to shard") {
		t.Errorf("%s: Whole = %q, want it to say from shard to shard", q, l.Whole)
	}
	if why := l.Exact(nil); why != l.Whole {
		t.Errorf("%s: Exact(nil) = %q, want Whole", q, why)
	}
	p := defaultPlan(t)
	p.Standing = true
	if l := p.ShardLoss(); !strings.Contains(l.Whole, "standing") {
		t.Errorf("a standing plan: Whole = %q", l.Whole)
	}
}

// TestShardLossFollowsOnlyOrderKeepingChains: a channel after a join or
// an aggregate on the shards follows no input; one after a distinct of a
// shuffled input does.
func TestShardLossFollowsOnlyOrderKeepingChains(t *testing.T) {
	for _, c := range []struct {
		q       string
		follows bool
	}{
		{"SELECT m.map, p.civ, p.rating FROM matches m JOIN match_players p ON p.match = m.token WHERE m.ladder = 'RM_TEAM' AND p.rating > 1500", false},
		{"SELECT match, COUNT(*) AS n FROM match_players GROUP BY match", false},
		{"SELECT DISTINCT civ, winner FROM match_players WHERE rating > 2000", true},
	} {
		p := planOf(t, c.q)
		l := p.ShardLoss()
		if l.Whole != "" {
			t.Fatalf("%s: Whole = %q\n%s", c.q, l.Whole, p)
		}
		if len(l.Outputs) == 0 {
			t.Fatalf("%s: no output of the shards\n%s", c.q, p)
		}
		for _, o := range l.Outputs {
			if (o.Follows != "") != c.follows {
				t.Errorf("%s: %s follows %q, want following %v\n%s", c.q, o.Channel, o.Follows, c.follows, p)
			}
		}
	}
}

// TestShardLossOfABroadcast: a subquery's row the gateway broadcasts to
// the shards is in its outbox, as the input it parses is, so a shard may
// be rebuilt alone whether the gateway computed the row from its own
// input (a subquery over a table, aggregated at the gateway) or from the
// shards' answers (an aggregate of their groups); in the second case only
// while the gateway has applied nothing of the lost shard's answer, from
// which it made the row (an aggregate's: it follows no input).
func TestShardLossOfABroadcast(t *testing.T) {
	for _, c := range []struct {
		q, subquery string // subquery: the channel of the shards' answers the row is made of, if any
	}{
		{"SELECT civ, COUNT(*) FROM match_players WHERE rating > (SELECT AVG(rating) FROM match_players) GROUP BY civ ORDER BY 1", ""},
		{"SELECT civ, COUNT(*) FROM match_players WHERE rating > (SELECT MAX(n) FROM (SELECT match, COUNT(*) AS n FROM match_players GROUP BY match) AS t) GROUP BY civ ORDER BY 1", "q-to-gateway"},
	} {
		p := planOf(t, c.q)
		broadcast := false
		for _, ch := range p.Channels {
			broadcast = broadcast || (ch.Broadcast && ch.To == p.Shard.Name)
		}
		if !broadcast {
			t.Fatalf("%s: no broadcast into the shards\n%s", c.q, p)
		}
		l := p.ShardLoss()
		if l.Whole != "" {
			t.Errorf("%s: Whole = %q, want a shard rebuilt alone", c.q, l.Whole)
		}
		if why := l.Exact(nil); why != "" {
			t.Errorf("%s: Exact(nil) = %q, want exact", c.q, why)
		}
		if c.subquery == "" {
			continue
		}
		if why := l.Exact(map[string]uint64{c.subquery: 1}); !strings.Contains(why, c.subquery) {
			t.Errorf("%s: Exact with the subquery's answer applied = %q, want a refusal naming %s", c.q, why, c.subquery)
		}
	}
}
