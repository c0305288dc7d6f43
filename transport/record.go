package transport

import "bytes"

// RecordReader is a Store that reads one record of a job without a Load
// (which reads back everything, outboxes too): the stores that keep
// records in memory (MemStore, segstore) are. A reader that wants one
// record now and then (the gateway's versions of a standing job, read
// when a client asks for one) uses ReadRecord.
type RecordReader interface {
	// Record returns a copy of record name of job as committed, and
	// whether the job has it.
	Record(job, name string) ([]byte, bool, error)
}

// ReadRecord reads record name of job from s: with its Record if s is a
// RecordReader, else from a Load.
func ReadRecord(s Store, job, name string) ([]byte, bool, error) {
	if r, ok := s.(RecordReader); ok {
		return r.Record(job, name)
	}
	img, err := s.Load()
	if err != nil {
		return nil, false, err
	}
	ji := img.Jobs[job]
	if ji == nil {
		return nil, false, nil
	}
	v, ok := ji.Records[name]
	return v, ok, nil
}

// Record is RecordReader's: a copy of the record.
func (s *MemStore) Record(job, name string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.jobs[job]
	if j == nil {
		return nil, false, nil
	}
	v, ok := j.Records[name]
	return bytes.Clone(v), ok, nil
}

// Record reads through to the store it wraps (ReadRecord).
func (f *FailStop) Record(job, name string) ([]byte, bool, error) {
	return ReadRecord(f.Store, job, name)
}
