//! Prints the `.tws` definition of a cube, for benchmarks and manual runs:
//! `cargo run --release -p cayley-tests --example cube_tws -- 2 URF > cube2.tws`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(2);
    let faces = args.get(1).map_or("URF", String::as_str);
    if !(n == 2 || n == 3) || faces.chars().any(|f| !"UDLRFB".contains(f)) {
        eprintln!("usage: cube_tws N FACES   (N = 2 or 3, FACES from UDLRFB, e.g. 2 URF)");
        std::process::exit(2);
    }
    print!("{}", cayley_tests::cube::cube_tws(n, faces));
}
