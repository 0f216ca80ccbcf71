//! What a net was loaded from: its text and the text of every GeoJSON file it read,
//! enough to load the same net again when the files have changed or gone (a
//! checkpoint keeps it, so that a run resumes with the net it was running).

use std::path::PathBuf;
use std::sync::Arc;

/// The text of a net and of every GeoJSON file it read, as they were when it was
/// loaded ([`Net::source`](crate::Net::source)); [`Net::from_source`](crate::Net::from_source)
/// loads the same net from it, with the same fingerprint, whatever the files on
/// disk say now.
///
/// ```
/// use ccpn::{Net, NetSource};
///
/// let net = Net::from_ron("n.ron", r#"Net(events: {"a": Atomic(type: "A")}, outputs: ["a"])"#)?;
/// let again = Net::from_source(net.source())?;
/// assert_eq!(again.fingerprint(), net.fingerprint());
/// assert_eq!(net.source().file(), "n.ron");
/// # Ok::<(), ccpn::NetError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NetSource {
    pub(crate) file: String,
    pub(crate) text: Arc<str>,
    /// Each GeoJSON file read, by the path it was read at, in the order read.
    pub(crate) geojson: Vec<(PathBuf, Arc<str>)>,
}

impl NetSource {
    /// The name the net was loaded under (its path, for a net read from a file):
    /// GeoJSON paths in it are relative to its directory.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The net's text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The GeoJSON files the net read: the path each was read at and its text.
    pub fn geojson(&self) -> impl ExactSizeIterator<Item = (&std::path::Path, &str)> {
        self.geojson.iter().map(|(p, t)| (p.as_path(), &**t))
    }
}
