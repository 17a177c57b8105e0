//! Shared helpers for example host programs.
