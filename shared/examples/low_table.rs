//! How long the low table of `L` pieces takes to build: every unreduced run
//! of a blocked space (the 2×6 Loopover `--no-symmetry`, sliding puzzles,
//! twisty subsets) builds one before its first level.
//!
//! `cargo run --release -p cayley-shared --example low_table -- [L] [--threads N]`
//! (default: L = 7, the default low part, and every core).

use cayley_shared::kernel::lowtable::LowTable;
use std::time::Instant;

fn main() {
    let mut low = 7;
    let mut threads = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--threads" => threads = Some(args.next().expect("--threads N").parse().expect("a thread count")),
            l => low = l.parse().expect("a number of low pieces, 2 to 8"),
        }
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .build()
        .expect("a thread pool");
    for even in [false, true] {
        let started = Instant::now();
        let table = pool.install(|| LowTable::new(low, even));
        println!(
            "L = {low}, even {even}: {} MB in {:.3} s on {} threads",
            table.bytes() >> 20,
            started.elapsed().as_secs_f64(),
            pool.current_num_threads()
        );
    }
}
