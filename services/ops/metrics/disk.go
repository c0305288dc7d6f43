package metrics

import "github.com/prometheus/client_golang/prometheus"

// The data directory's filesystem, read at scrape time.
var (
	descDiskAvail = desc("data_filesystem_avail_bytes", "Bytes free for this process on the filesystem of its data directory (what an unprivileged writer may still use).")
	descDiskSize  = desc("data_filesystem_size_bytes", "Size in bytes of the filesystem of the process's data directory.")
)

// diskCollector reads the filesystem of a data directory.
type diskCollector struct{ dir string }

// NewDiskCollector returns the collector of the filesystem that holds dir
// (a process's --data): its size and the bytes still free, read with
// statfs at every scrape, so that an alert can say a disk is nearly full
// before a commit fails on it (which ends the process: services/roles/node).
// A directory that cannot be read, or a platform without statfs, gives
// no series.
func NewDiskCollector(dir string) prometheus.Collector { return diskCollector{dir} }

func (diskCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descDiskAvail
	ch <- descDiskSize
}

func (c diskCollector) Collect(ch chan<- prometheus.Metric) {
	avail, size, ok := filesystem(c.dir)
	if !ok {
		return
	}
	ch <- prometheus.MustNewConstMetric(descDiskAvail, prometheus.GaugeValue, float64(avail))
	ch <- prometheus.MustNewConstMetric(descDiskSize, prometheus.GaugeValue, float64(size))
}
