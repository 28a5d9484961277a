// Package logger records training metrics and hyperparameters.
//
// It mirrors PyTorch Lightning's logger API: a [Logger] receives metric
// values per optimization step and the run's hyperparameters from the
// trainer (rank 0 only). [CSVLogger] writes them to
// SaveDir/Name/version_N/metrics.csv and hparams.yaml like Lightning's
// CSVLogger, and [Multi] fans calls out to several loggers. A version
// directory chosen as the next free one is claimed atomically
// ([VersionDir.Claim]), and the file loggers are [Resumable]: a checkpoint
// records how far their files go, and a run resumed from it continues them.
package logger
