package gateway

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	wololov1 "github.com/wololo/wololo/proto/wololo/v1"
	"github.com/wololo/wololo/transport"
)

// A standing job's versions, as the gateway's stage runtime writes them
// in the commits of the job's epoch task (the contract of docs/standing.md,
// "In the cluster"): in the commit that completes epoch K of a query,
// the record version/K/NAME.csv, the query's whole answer over epochs
// 1..K (byte-equal to a batch job's NAME.csv over those rows), and
// change/K/NAME.csv, its change from version K-1 (the query's columns
// and diff). Epoch K is published when every query of the job has its
// version/K/ record. The gateway indexes them as they come in every
// commit's records (Records, the runtime's OnRecords) and from its store
// on a restart, and reads them from the store when a client asks.

// versionPrefix and changePrefix begin the records of a version and of
// its change.
const (
	versionPrefix = "version/"
	changePrefix  = "change/"
)

// version is one epoch's answers, as an index of the store's records:
// for each query's result file (NAME.csv) and its change, the job whose
// records hold it and its sizes. The files themselves stay in the store
// (which holds them anyway: segstore and the MemStore keep every
// record's value in memory) and are read from it when a client asks
// (read), so the gateway's memory per version is a few numbers per
// query, whatever the answers' size or the number of epochs.
type version struct {
	files   map[string]fileRef
	changes map[string]fileRef
}

// fileRef is where a version's file or change is, and its sizes: rows
// of a file, rows added and removed of a change (ClusterJob.latest).
type fileRef struct {
	job            string // the job whose records hold it
	rows           int64
	added, removed int64
	// whole marks an added query's first version's change: not a
	// record, but the version's rows each added (wholeChange), made
	// from the version's file when read.
	whole bool
}

// versions are a standing job's versions, those published and those
// whose records are not all in yet.
type versions struct {
	names []string // the job's result files, NAME.csv of each query
	// added are the result files of the queries added to the job
	// (addquery.go), each with the epoch it was added at: its version of
	// that epoch and earlier ones are taken when they come (a backfill),
	// and an epoch after it is published only with it.
	added   map[string]int64
	byEpoch map[int64]*version
	// published is the last epoch published: every epoch up to it has
	// every query's version.
	published int64
	// latest is the size of each query's answer and change in version
	// published, for the operators' view (ClusterJob.latest).
	latest []*wololov1.QueryVersion
	// store holds the records the versions index (read).
	store transport.Store
}

func newVersions(names []string, store transport.Store) *versions {
	return &versions{names: names, byEpoch: map[int64]*version{}, added: map[string]int64{}, store: store}
}

// wants reports whether a record of name's version of epoch is one to
// take: a query's of the job not published yet, or an added query's.
func (v *versions) wants(name string, epoch int64) bool {
	if at, ok := v.added[name]; ok {
		return epoch >= at
	}
	return slices.Contains(v.names, name) && epoch > v.published
}

// whole reports whether ver, epoch's version, has every query's answer
// it is published with.
func (v *versions) whole(epoch int64, ver *version) bool {
	for _, name := range v.names {
		if _, ok := ver.files[name]; !ok {
			return false
		}
	}
	for name, at := range v.added {
		if _, ok := ver.files[name]; epoch > at && !ok {
			return false
		}
	}
	return true
}

// shown are the result files of a version: the job's, then the added
// queries' it has, by name.
func (v *versions) shown(ver *version) []string {
	out := slices.Clone(v.names)
	for _, name := range slices.Sorted(maps.Keys(v.added)) {
		if _, ok := ver.files[name]; ok {
			out = append(out, name)
		}
	}
	return out
}

// versionKey reads a record's key as a version's or a change's: its
// epoch and result file name.
func versionKey(key string) (epoch int64, name string, change, ok bool) {
	rest, ok := strings.CutPrefix(key, versionPrefix)
	if !ok {
		if rest, ok = strings.CutPrefix(key, changePrefix); !ok {
			return 0, "", false, false
		}
		change = true
	}
	k, name, ok := strings.Cut(rest, "/")
	if !ok {
		return 0, "", false, false
	}
	epoch, err := strconv.ParseInt(k, 10, 64)
	if err != nil || epoch < 1 || strconv.FormatInt(epoch, 10) != k {
		return 0, "", false, false
	}
	return epoch, name, change, true
}

// add takes the versions and changes among records of job (the job's
// own, or an added query's job's), indexing them (any others are
// left), and reports whether that published an epoch.
func (v *versions) add(job string, records map[string][]byte) bool {
	refs := map[string]fileRef{}
	for key, data := range records {
		epoch, name, change, ok := versionKey(key)
		if !ok || !v.wants(name, epoch) {
			continue
		}
		ref := fileRef{job: job}
		switch {
		case v.added[name] == epoch && change:
			continue // an added query's first version is all new: its change is made of it
		case change:
			ref.added, ref.removed = csvSizes(data, true)
		default:
			ref.rows, _ = csvSizes(data, false)
			if v.added[name] == epoch {
				refs[changePrefix+strconv.FormatInt(epoch, 10)+"/"+name] = fileRef{job: job, added: ref.rows, whole: true}
			}
		}
		refs[key] = ref
	}
	return v.index(refs)
}

// merge takes the versions another's index holds (an added query's
// job's, into the job it follows), as add takes records, and reports
// whether that published an epoch.
func (v *versions) merge(from *versions) bool {
	refs := map[string]fileRef{}
	for epoch, ver := range from.byEpoch {
		k := strconv.FormatInt(epoch, 10) + "/"
		for name, ref := range ver.files {
			if !v.wants(name, epoch) {
				continue
			}
			refs[versionPrefix+k+name] = ref
			if v.added[name] == epoch { // its first version here: all new
				refs[changePrefix+k+name] = fileRef{job: ref.job, added: ref.rows, whole: true}
			}
		}
		for name, ref := range ver.changes {
			if v.wants(name, epoch) && v.added[name] != epoch {
				refs[changePrefix+k+name] = ref
			}
		}
	}
	return v.index(refs)
}

// clone is a copy of v's index (its records stay where they are).
func (v *versions) clone() *versions {
	out := newVersions(v.names, v.store)
	maps.Copy(out.added, v.added)
	out.published = v.published
	for epoch, ver := range v.byEpoch {
		out.byEpoch[epoch] = &version{files: maps.Clone(ver.files), changes: maps.Clone(ver.changes)}
	}
	return out
}

// index takes refs, by their records' keys, and publishes the epochs
// they make whole; it reports whether it published one.
func (v *versions) index(refs map[string]fileRef) bool {
	latest := false // a record of the latest version published: an added query's first
	for key, ref := range refs {
		epoch, name, change, _ := versionKey(key)
		ver := v.byEpoch[epoch]
		if ver == nil {
			ver = &version{files: map[string]fileRef{}, changes: map[string]fileRef{}}
			v.byEpoch[epoch] = ver
		}
		latest = latest || (v.published > 0 && epoch == v.published)
		if change {
			ver.changes[name] = ref
		} else {
			ver.files[name] = ref
		}
	}
	was := v.published
	for {
		ver := v.byEpoch[v.published+1]
		if ver == nil || !v.whole(v.published+1, ver) {
			break
		}
		v.published++
	}
	if v.published == was && !latest {
		return false
	}
	ver := v.byEpoch[v.published]
	v.latest = nil
	for _, name := range v.shown(ver) {
		f, c := ver.files[name], ver.changes[name]
		v.latest = append(v.latest, &wololov1.QueryVersion{Name: name, Rows: f.rows, Added: c.added, Removed: c.removed})
	}
	return v.published != was
}

// read reads from the store the files of names in epoch's version
// (changes: their changes), by name.
func (v *versions) read(epoch int64, refs map[string]fileRef, changes bool) (map[string][]byte, error) {
	out := make(map[string][]byte, len(refs))
	k := strconv.FormatInt(epoch, 10) + "/"
	for name, ref := range refs {
		key := versionPrefix + k + name
		if changes && !ref.whole {
			key = changePrefix + k + name
		}
		data, ok, err := transport.ReadRecord(v.store, ref.job, key)
		if err == nil && !ok {
			err = fmt.Errorf("no record %s", key)
		}
		if err != nil {
			return nil, errorf(ErrStore, "read version %d of %s from the store: %v", epoch, name, err)
		}
		if ref.whole {
			data = wholeChange(data)
		}
		out[name] = data
	}
	return out, nil
}

// csvSizes counts the records of a result file after its header: with
// weights, those of a change, each record's last field its weight, the
// weights above 0 added up in n and those below in minus (made
// positive). A record that does not read ends the count.
func csvSizes(file []byte, weights bool) (n, minus int64) {
	r := csv.NewReader(bytes.NewReader(file))
	r.FieldsPerRecord, r.ReuseRecord = -1, true
	if _, err := r.Read(); err != nil {
		return 0, 0
	}
	for {
		rec, err := r.Read()
		if err != nil {
			return n, minus
		}
		if !weights {
			n++
			continue
		}
		w, err := strconv.ParseInt(rec[len(rec)-1], 10, 64)
		switch {
		case err != nil:
			return n, minus
		case w > 0:
			n += w
		default:
			minus -= w
		}
	}
}

// get is a published epoch's version, nil if it is not published.
func (v *versions) get(epoch int64) *version {
	if epoch < 1 || epoch > v.published {
		return nil
	}
	return v.byEpoch[epoch]
}

// Records is the stage runtime's OnRecords (hooked through
// EpochRuntime.HookRecords): the records of a commit of a job, among
// which a standing job's versions and changes. Any other job's, or
// records that are no version, are ignored.
func (g *Gateway) Records(id string, records map[string][]byte) {
	j, err := g.jobs.get(id)
	if err != nil || j.standing == nil {
		return
	}
	j.mu.Lock()
	if j.standing.versions.add(j.id, records) {
		j.log.Info("version published", "epoch", j.standing.versions.published)
		j.notifyLocked()
	}
	j.mu.Unlock()
	if j.addedTo != "" {
		forwardRecords(j, records)
	}
}

// versionFiles are the result files a GetResults of epoch sends, and
// the epoch they are: a batch job's results (epoch 0 only), a standing
// job's version epoch, or with epoch 0 its latest (a closed job's final
// results once done).
func (j *job) versionFiles(epoch int64) (map[string][]byte, int64, error) {
	j.mu.Lock()
	s := j.standing
	if s == nil || (epoch == 0 && j.state == wololov1.JobState_JOB_STATE_DONE) {
		j.mu.Unlock()
		if s == nil && epoch != 0 {
			return nil, 0, errorf(ErrInvalid, "job %q is a batch job: it has no epochs, only its results (no --epoch)", j.name)
		}
		files, err := j.finalResults()
		if s != nil {
			j.mu.Lock()
			epoch = s.ended
			j.mu.Unlock()
		}
		if s != nil && err == nil {
			files, err = j.withAdded(files, epoch)
		}
		return files, epoch, err
	}
	j.activity = time.Now()
	if err := j.failureLocked(); err != nil {
		j.mu.Unlock()
		return nil, 0, err
	}
	published := s.versions.published
	if epoch == 0 {
		if published == 0 {
			j.mu.Unlock()
			return nil, 0, errorf(ErrNotDone, "job %q has no version yet: its epoch 1 is not done", j.name)
		}
		epoch = published
	}
	v := s.versions.get(epoch)
	if v == nil {
		j.mu.Unlock()
		return nil, 0, errorf(ErrNoJob, "job %q has no version %d: %s", j.name, epoch, publishedText(published))
	}
	refs := maps.Clone(v.files)
	j.mu.Unlock()
	files, err := s.versions.read(epoch, refs, false)
	return files, epoch, err
}

// publishedText says which epochs a job has published.
func publishedText(n int64) string {
	switch n {
	case 0:
		return "none is published yet"
	case 1:
		return "epoch 1 is published"
	}
	return fmt.Sprintf("epochs 1 to %d are published", n)
}

// change is the change of a published epoch's version, by result file,
// and how things stand: closed once the job is done (every version
// published), over with an error once it failed; changed is closed on
// the job's next change.
func (j *job) change(epoch int64) (changes map[string][]byte, published bool, done bool, changed <-chan struct{}, err error) {
	j.mu.Lock()
	if err := j.failureLocked(); err != nil {
		j.mu.Unlock()
		return nil, false, false, nil, err
	}
	changed = j.changed
	v := j.standing.versions.get(epoch)
	if v == nil {
		done := j.state == wololov1.JobState_JOB_STATE_DONE
		j.mu.Unlock()
		return nil, false, done, changed, nil
	}
	refs := maps.Clone(v.changes)
	j.mu.Unlock()
	changes, err = j.standing.versions.read(epoch, refs, true)
	return changes, err == nil, false, changed, err
}

// versionRows are the rows of each table a standing job's version epoch
// is over (EpochEnd.rows), nil for a batch job's results.
func (j *job) versionRows(epoch int64) map[string]int64 {
	if j.standing == nil || epoch == 0 {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return maps.Clone(j.standing.ends[epoch].GetRows())
}
