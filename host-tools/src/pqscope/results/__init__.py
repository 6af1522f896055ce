"""What measurements leave behind: run directories (samples as they arrive, meta.json), the records
and seeds, the one store of typed result documents, statistics of the samples, probes and the
TLS budget computed from kept runs."""
