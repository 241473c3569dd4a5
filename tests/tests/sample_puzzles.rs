//! The sample puzzle files in `tests/data/puzzles/` are the cubes the
//! tests derive from the geometry (`tests/src/cube.rs`); README.md's
//! commands that use them run in `readme_commands.rs`.

use cayley_tests::cube::cube_tws;
use std::path::Path;

fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root")
}

#[test]
fn the_shipped_cubes_are_the_ones_derived_from_the_geometry() {
    let dir = repository().join("tests/data/puzzles");
    for (file, n, faces) in [("2x2x2.tws", 2, "URF"), ("3x3x3.tws", 3, "UDLRFB")] {
        let shipped = std::fs::read_to_string(dir.join(file)).unwrap();
        assert_eq!(
            shipped,
            cube_tws(n, faces),
            "{} differs from cube_tws({}, {})",
            file,
            n,
            faces
        );
    }
}
