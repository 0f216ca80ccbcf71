//! Reading events and writing detections: JSON Lines and CSV in, JSON Lines out.
//!
//! The detector itself does no I/O; these are the formats `ccpn-run` speaks, public
//! so that monitoring software can speak them too. [`EventReader`] reads events as
//! `ccpn-run` does: JSON Lines or CSV, whichever the input is, with numbered errors.

pub mod read;
pub mod reorder;
pub mod write;

pub use read::EventReader;
