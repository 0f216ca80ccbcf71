//! Command-line flags of `ccpn-run`.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

use ccpn::io::read::{FieldMap, FieldMapError, TimeUnit};

/// What `--help` says of the input, after the flags.
const INPUT_FIELDS: &str = "\
Input fields (JSON Lines objects, or CSV columns named in a header; docs/input.md):
  id          integer or string, echoed in the detections' `ids`
  time        seconds since the epoch (see --time-unit) or RFC 3339
  type        the event type `Atomic(type: …)` matches (default `event`, see --default-type)
  lon, lat    location on `space: Wgs84` nets (degrees)
  x, y        location on `space: Planar` nets
  any other   an attribute for `when:` filters and `key:`
Other names are mapped with --field NAME=SOURCE. Output fields: docs/output.md.";

/// Detects composite spatio-temporal events: reads events (JSON Lines or CSV) and
/// writes one JSON line per detection of the net's outputs.
#[derive(Debug, Parser)]
#[command(name = "ccpn-run", version, about, max_term_width = 100, after_help = INPUT_FIELDS)]
pub(crate) struct Args {
    /// The net (a RON file).
    pub(crate) net: PathBuf,

    /// The events; standard input when absent or `-`.
    pub(crate) events: Option<PathBuf>,

    /// Check the net: print a summary on stdout and its warnings on stderr, and exit.
    #[arg(long, conflicts_with = "dot")]
    pub(crate) check: bool,

    /// Print the compiled Petri net as Graphviz and exit.
    #[arg(long)]
    pub(crate) dot: bool,

    /// Input format; `auto` decides from the first non-blank line.
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    pub(crate) format: FormatArg,

    /// Detections as JSON Lines, or as one GeoJSON FeatureCollection (for a map; `Wgs84`
    /// nets only).
    #[arg(long, value_enum, default_value_t = OutputArg::Jsonl)]
    pub(crate) output: OutputArg,

    /// Reorder events arriving up to this late (seconds, or "500ms", "2s", "1m").
    #[arg(long, value_name = "D", value_parser = ccpn::parse_duration, default_value = "0")]
    pub(crate) max_delay: i64,

    /// Most events held for --max-delay reordering; beyond it the oldest is processed
    /// before its delay (counted as `released_early`, with a warning).
    #[arg(long, value_name = "N", default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) max_held: u64,

    /// Also write late lines, unchanged, to this file.
    #[arg(long, value_name = "FILE")]
    pub(crate) late: Option<PathBuf>,

    /// Stop with exit status 3 at the first bad or late line (the events held for
    /// `--max-delay` reordering before it are detected first).
    #[arg(long)]
    pub(crate) strict: bool,

    /// Print a JSON summary on stderr at the end.
    #[arg(long)]
    pub(crate) stats: bool,

    /// Also print a JSON line of counters on stderr every N events processed (a live
    /// feed of the run's progress).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) stats_every: Option<u64>,

    /// No warnings and no progress line: only errors, and at the end one line
    /// counting the bad and late lines whose reports were silenced.
    #[arg(long, short = 'q')]
    pub(crate) quiet: bool,

    /// Reload the net when its file (or a GeoJSON file it reads) changes, keeping
    /// the state of what did not change; SIGHUP reloads it in any case.
    #[arg(long)]
    pub(crate) watch: bool,

    /// Most tokens the net may hold at once; beyond it the oldest are evicted.
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    pub(crate) max_tokens: usize,

    /// Most partial sets each counting index may hold; beyond it new ones are refused.
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    pub(crate) max_sets: usize,

    /// Test every zone of every `Within` instead of stabbing the zone R*-tree (to
    /// compare; the detections are the same).
    #[arg(long)]
    pub(crate) no_zone_index: bool,

    /// Save the run's whole state to FILE every `--checkpoint-every` input lines
    /// (atomically: a crash leaves the previous checkpoint or the new one). Needs
    /// JSON Lines output.
    #[arg(long, value_name = "FILE")]
    pub(crate) checkpoint: Option<PathBuf>,

    /// Input lines between checkpoints.
    #[arg(long, value_name = "N", default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) checkpoint_every: u64,

    /// Continue from the checkpoint in FILE (made by `--checkpoint` with the same net
    /// and options) on the same input: the lines it had consumed are skipped, and
    /// detections go on with the next `seq`. Without such a file, start afresh.
    #[arg(long, value_name = "FILE")]
    pub(crate) resume: Option<PathBuf>,

    /// Run on Timely Dataflow with N worker threads in this process: the net's
    /// detecting is split into `--partitions` (see `--check` for how).
    #[arg(short = 'w', long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub(crate) workers: Option<u32>,

    /// Processes in the cluster (each with `--workers` threads); process 0 reads the input.
    #[arg(short = 'n', long, value_name = "P", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub(crate) processes: u32,

    /// This process's number in the cluster, from 0 (default 0); needs `--processes`.
    #[arg(short = 'p', long, value_name = "I")]
    pub(crate) process: Option<u32>,

    /// The cluster's addresses: one `host:port` per line, process 0's first; needs
    /// `--processes`.
    #[arg(short = 'H', long, value_name = "FILE")]
    pub(crate) hostfile: Option<PathBuf>,

    /// Seconds the processes of a cluster wait for each other to connect.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub(crate) connect_timeout: u64,

    /// The cluster's shared secret, in FILE: every process of a cluster needs the
    /// same (at least 16 bytes; trailing whitespace is not part of it). Without this
    /// flag, the environment variable CCPN_CLUSTER_SECRET holds it. Required when the
    /// host file names another machine; see docs/scale-out.md.
    #[arg(long, value_name = "FILE")]
    pub(crate) cluster_secret_file: Option<PathBuf>,

    /// Partitions the detecting is split into when run on workers (many more than
    /// workers keeps them balanced; the same number gives the same detections in the
    /// same order whatever the number of workers).
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub(crate) partitions: u32,

    /// With workers: each worker writes its own detections, in time order, to
    /// DIR/worker-I.jsonl (I its number in the cluster), instead of process 0
    /// gathering them all on stdout.
    #[arg(long, value_name = "DIR")]
    pub(crate) output_dir: Option<PathBuf>,

    /// For a live stream whose event times follow the wall clock: when no line has
    /// come for D, event time moves on to the wall clock less `--max-delay`, so
    /// periodic ticks and absences are detected on a quiet input (events older
    /// than that are then late). Off by default: time moves only with events.
    #[arg(long, value_name = "D", value_parser = ccpn::parse_duration)]
    pub(crate) heartbeat: Option<i64>,

    /// Read event field NAME (id, time, type, lon/lat or x/y, or an attribute) from
    /// the input's field SOURCE; repeatable: `--field time=BaseDateTime --field
    /// id=MMSI`. A source mapped twice gives both fields.
    #[arg(long = "field", value_name = "NAME=SOURCE", value_parser = field_pair)]
    pub(crate) fields: Vec<(String, String)>,

    /// Unit of numeric times (and numbers in strings): s, ms, us or ns.
    #[arg(long, value_name = "UNIT", default_value = "s", value_parser = |s: &str| s.parse::<TimeUnit>())]
    pub(crate) time_unit: TimeUnit,

    /// Type of the events that have no `type` field (default `event`).
    #[arg(long, value_name = "TYPE")]
    pub(crate) default_type: Option<String>,

    /// Longest accepted input line, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = ccpn::io::read::DEFAULT_MAX_LINE_BYTES)]
    pub(crate) max_line_bytes: usize,
}

/// `NAME=SOURCE`, checked.
fn field_pair(s: &str) -> Result<(String, String), FieldMapError> {
    let map = FieldMap::new().parse_field(s)?;
    let (name, source) = map.pairs().next().expect("one pair");
    Ok((name.to_owned(), source.to_owned()))
}

impl Args {
    /// `--field`, `--time-unit` and `--default-type` as a field map.
    pub(crate) fn field_map(&self) -> Result<FieldMap, FieldMapError> {
        let mut map = FieldMap::new().time_unit(self.time_unit);
        for (name, source) in &self.fields {
            map = map.field(name, source)?;
        }
        match &self.default_type {
            Some(kind) => map.default_type(kind),
            None => Ok(map),
        }
    }

    /// `--heartbeat`, as a duration (at least a millisecond).
    pub(crate) fn heartbeat(&self) -> Option<std::time::Duration> {
        self.heartbeat
            .map(|us| std::time::Duration::from_micros(us.max(1_000).unsigned_abs()))
    }

    /// This process's number in the cluster (`--process`, 0 by default).
    pub(crate) fn process_index(&self) -> u32 {
        self.process.unwrap_or(0)
    }

    /// What is wrong with the flags taken together, naming them: `Err` is an
    /// argument error (exit status 2).
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.processes > 1 {
            if self.hostfile.is_none() {
                return Err(format!(
                    "--processes {} needs --hostfile FILE (-H): the processes' addresses",
                    self.processes
                ));
            }
            if self.process_index() >= self.processes {
                return Err(format!(
                    "--process {} is not one of the {} processes of --processes (0 to {})",
                    self.process_index(),
                    self.processes,
                    self.processes - 1
                ));
            }
        } else if self.process.is_some()
            || self.hostfile.is_some()
            || self.cluster_secret_file.is_some()
        {
            let flag = if self.process.is_some() {
                "--process"
            } else if self.hostfile.is_some() {
                "--hostfile"
            } else {
                "--cluster-secret-file"
            };
            return Err(format!(
                "{flag} is for a cluster: it needs --processes P (more than 1)"
            ));
        }
        // A checkpoint or a --late file written over the events being read would
        // destroy them.
        let input = self.events.as_deref().filter(|p| p.as_os_str() != "-");
        for (flag, out) in [("--checkpoint", &self.checkpoint), ("--late", &self.late)] {
            if let (Some(out), Some(input)) = (out.as_deref(), input) {
                if same_file(out, input) {
                    return Err(format!(
                        "{flag} {} is the events file: it would be written over the input",
                        out.display()
                    ));
                }
            }
        }
        if self.checkpoint.is_some() && self.output == OutputArg::Geojson {
            return Err("--checkpoint needs JSON Lines output (--output jsonl): a resumed run cannot continue a GeoJSON document".into());
        }
        if self.dataflow() {
            if self.checkpoint.is_some() || self.resume.is_some() {
                return Err(
                    "--checkpoint and --resume need the single-threaded run (no --workers)".into(),
                );
            }
            if self.output == OutputArg::Geojson {
                return Err("--output geojson needs the single-threaded run (no --workers)".into());
            }
            if self.watch {
                return Err("--watch needs the single-threaded run (no --workers): a cluster's processes cannot change nets together".into());
            }
        }
        self.field_map()
            .map(|_| ())
            .map_err(|e| format!("--field: {e}"))
    }

    /// What is wrong with the flags for a net of `space`: `Err` is an argument error.
    pub(crate) fn check_for(&self, space: ccpn::Space) -> Result<(), String> {
        if self.output == OutputArg::Geojson && space == ccpn::Space::Planar {
            return Err(
                "--output geojson needs a `space: Wgs84` net: GeoJSON coordinates are \
                        longitude and latitude (RFC 7946), and this net is Planar (x/y in its \
                        own units); use --output jsonl"
                    .into(),
            );
        }
        Ok(())
    }

    /// Is the run on Timely Dataflow workers rather than one detector thread?
    pub(crate) fn dataflow(&self) -> bool {
        self.workers.is_some() || self.processes > 1 || self.output_dir.is_some()
    }
}

/// `--output`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum OutputArg {
    Jsonl,
    Geojson,
}

/// `--format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum FormatArg {
    Auto,
    Jsonl,
    Csv,
}

/// Do `a` and `b` name one file (the same path, or the same file by another path)?
fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    if a == b {
        return true;
    }
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
