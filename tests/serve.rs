//! `ccpn-run serve`, end to end.
