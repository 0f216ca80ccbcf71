//! Reading events and writing detections: JSON Lines and CSV in, JSON Lines out.
//!
//! The detector itself does no I/O; these are the formats `ccpn-run` speaks, public
//! so that monitoring software can speak them too.

pub mod read;
pub mod reorder;
pub mod write;
