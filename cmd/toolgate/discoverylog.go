package main

import (
	"flag"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/tools/discovery"
)

// discoveryLogFlag registers --discovery-log, the file a server appends
// its discovery log to, on fs.
func discoveryLogFlag(fs *flag.FlagSet) *string {
	return fs.String("discovery-log", "", "append each discovery query and each tool then called to `FILE` "+
		"(JSON Lines, created 0600), for toolgate log misses and cards learn")
}

// serverDiscoverer returns the Discoverer of a server: it appends to the
// JSON Lines log at logPath when that is set, and registers its metrics
// (toolgate_discovery_*) with reg when that is not nil. closeLog closes
// the log; call it once the server has stopped. model is the embedding
// model tier (--embed-model), nil for none.
func serverDiscoverer(logPath string, reg prometheus.Registerer, model *discovery.ModelOptions) (d *discovery.Discoverer, closeLog func() error, err error) {
	opts := &discovery.Options{Registerer: reg, Model: model}
	closeLog = func() error { return nil }
	if logPath != "" {
		l, err := discovery.OpenJSONLog(logPath)
		if err != nil {
			return nil, nil, err
		}
		opts.Log, closeLog = l, l.Close
	}
	if d, err = discovery.New(opts); err != nil {
		closeLog()
		return nil, nil, err
	}
	return d, closeLog, nil
}
