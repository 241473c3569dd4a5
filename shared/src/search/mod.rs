//! Stage 6, the search and its results.
//!
//! - [`resources`], [`calibrate`]: the memory and disk a job needs, and the
//!   speeds of this machine that a plan projects from; [`levels`]: how many
//!   states each level will hold.
//! - [`antipodes`]: the farthest states and a shortest word for each, walked
//!   back through the stored levels.
//! - [`bound`]: the counting lower bound on the diameter.

pub mod antipodes;
pub mod bound;
pub mod calibrate;
pub mod levels;
pub mod resources;
