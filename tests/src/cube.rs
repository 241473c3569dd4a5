//! `.tws` definitions of the 2×2×2 and 3×3×3 cubes, derived here from the
//! cube's geometry (no table copied from anywhere), for the group-order,
//! twisty-puzzle and declared-symmetry tests.
//!
//! Cubies sit at integer points of `{-1, 0, 1}³`; a sticker is a cubie
//! position plus an outward axis direction. A face turn rotates the cubies
//! of that face's layer a quarter turn about the face's normal. Orientation:
//! each position lists its stickers in a fixed order (for corners, one with
//! positive orientation, so rotations shift the list cyclically), and a
//! piece's twist is how far its reference sticker moves along that list.

type Vec3 = [i32; 3];

/// Faces by name: (axis, side). x = R/L, y = U/D, z = F/B.
const FACES: [(char, usize, i32); 6] = [
    ('U', 1, 1),
    ('D', 1, -1),
    ('R', 0, 1),
    ('L', 0, -1),
    ('F', 2, 1),
    ('B', 2, -1),
];

/// Cubie positions with `zeros` zero coordinates (0: corners, 1: edges).
fn positions(zeros: usize) -> Vec<Vec3> {
    let mut out = Vec::new();
    for x in -1..=1 {
        for y in -1..=1 {
            for z in -1..=1 {
                let v = [x, y, z];
                if v.iter().filter(|&&c| c == 0).count() == zeros {
                    out.push(v);
                }
            }
        }
    }
    out
}

fn cross(a: Vec3, b: Vec3) -> Vec3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn dot(a: Vec3, b: Vec3) -> i32 {
    a.iter().zip(&b).map(|(x, y)| x * y).sum()
}

/// Quarter turn of `v` about unit axis `n`, clockwise seen from outside:
/// Rodrigues' formula at −90°, `v' = n (n·v) − n × v`.
fn turn(n: Vec3, v: Vec3) -> Vec3 {
    let c = cross(n, v);
    let d = dot(n, v);
    [n[0] * d - c[0], n[1] * d - c[1], n[2] * d - c[2]]
}

/// The sticker directions of a position, in the position's fixed order.
fn stickers(v: Vec3) -> Vec<Vec3> {
    // U/D stickers first, the usual reference for twists.
    let mut dirs: Vec<Vec3> = [1, 0, 2]
        .into_iter()
        .filter(|&a| v[a] != 0)
        .map(|a| {
            let mut d = [0; 3];
            d[a] = v[a];
            d
        })
        .collect();
    // Corners: order the three stickers so they form a positive frame;
    // a rotation then maps the list of one corner to a cyclic shift of
    // another's.
    if dirs.len() == 3 && dot(cross(dirs[0], dirs[1]), dirs[2]) < 0 {
        dirs.swap(1, 2);
    }
    dirs
}

/// One set of a move: (permutation line, orientation line), twsearch style:
/// position `j` receives the content of position `perm[j]`, and the piece
/// leaving position `s` gains twist `ori[s]`.
fn set_move(places: &[Vec3], normal: Vec3) -> (Vec<usize>, Vec<usize>) {
    let mut perm: Vec<usize> = (0..places.len()).collect();
    let mut ori = vec![0; places.len()];
    for (s, &v) in places.iter().enumerate() {
        if dot(v, normal) != 1 {
            continue;
        }
        let dest_pos = turn(normal, v);
        let d = places.iter().position(|&p| p == dest_pos).expect("turns keep cubies");
        perm[d] = s;
        let moved = turn(normal, stickers(v)[0]);
        ori[s] = stickers(dest_pos)
            .iter()
            .position(|&x| x == moved)
            .expect("sticker lands");
    }
    (perm, ori)
}

fn line(values: &[usize], plus_one: bool) -> String {
    values
        .iter()
        .map(|v| (v + plus_one as usize).to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `.tws` text of the `n`×`n`×`n` cube (`n` = 2 or 3) with quarter turns
/// of the named faces as moves (e.g. `"URF"`).
pub fn cube_tws(n: usize, faces: &str) -> String {
    assert!(n == 2 || n == 3, "2×2×2 or 3×3×3");
    let mut sets = vec![("CORNERS", positions(0), 3)];
    if n == 3 {
        sets.push(("EDGES", positions(1), 2));
    }
    let mut text = format!("# {n}x{n}x{n} cube, moves {faces}\nName Cube{n}\n\n");
    for (name, places, k) in &sets {
        text += &format!("Set {} {} {}\n", name, places.len(), k);
    }
    text += "\nSolved\n";
    for (name, places, _) in &sets {
        let id: Vec<usize> = (0..places.len()).collect();
        text += &format!(
            "{}\n{}\n{}\n",
            name,
            line(&id, true),
            line(&vec![0; places.len()], false)
        );
    }
    text += "End\n";
    for face in faces.chars() {
        let &(_, axis, side) = FACES.iter().find(|f| f.0 == face).expect("a face letter");
        let mut normal = [0; 3];
        normal[axis] = side;
        text += &format!("\nMove {}\n", face);
        for (name, places, _) in &sets {
            let (perm, ori) = set_move(places, normal);
            text += &format!("{}\n{}\n{}\n", name, line(&perm, true), line(&ori, false));
        }
        text += "End\n";
    }
    text
}

/// The cube's face turns as permutations of its stickers, straight from
/// the geometry (no `.tws` text, no orientation convention): sticker
/// `(v, d)` of a cubie at `v` facing `d` goes to `(turn(v), turn(d))` when
/// the cubie is in the turning layer. With `all_powers`, each face also
/// gives its half and inverse turns (the half-turn metric).
pub fn cube_sticker_generators(n: usize, faces: &str, all_powers: bool) -> Vec<Vec<u8>> {
    let stickers = sticker_list(n);
    let index = |x: (Vec3, Vec3)| stickers.iter().position(|&y| y == x).expect("stickers map to stickers") as u8;
    let mut gens = Vec::new();
    for face in faces.chars() {
        let &(_, axis, side) = FACES.iter().find(|f| f.0 == face).expect("a face letter");
        let mut normal = [0; 3];
        normal[axis] = side;
        let quarter: Vec<u8> = stickers
            .iter()
            .map(|&(v, d)| {
                if dot(v, normal) == 1 {
                    index((turn(normal, v), turn(normal, d)))
                } else {
                    index((v, d))
                }
            })
            .collect();
        let mut power = quarter.clone();
        for _ in 0..if all_powers { 3 } else { 1 } {
            gens.push(power.clone());
            power = power.iter().map(|&s| quarter[s as usize]).collect();
        }
        if !all_powers {
            // Quarter-turn metric: the inverse turn is a move too.
            let mut inverse = vec![0u8; quarter.len()];
            for (s, &t) in quarter.iter().enumerate() {
                inverse[t as usize] = s as u8;
            }
            gens.push(inverse);
        }
    }
    gens
}

/// Every sticker of the `n`×`n`×`n` cube (`n` = 2 or 3) as (cubie
/// position, outward direction), corners first: the points of
/// [`cube_sticker_generators`] and [`cube_sticker_symmetries`].
fn sticker_list(n: usize) -> Vec<(Vec3, Vec3)> {
    assert!(n == 2 || n == 3, "2×2×2 or 3×3×3");
    let mut cubies = positions(0);
    if n == 3 {
        cubies.extend(positions(1));
    }
    cubies
        .iter()
        .flat_map(|&v| self::stickers(v).into_iter().map(move |d| (v, d)))
        .collect()
}

/// The rigid motions of the cube (rotations and mirror images: the 48
/// signed permutation matrices) that map the set of `faces` onto itself,
/// as permutations of the stickers of [`cube_sticker_generators`]: sticker
/// `(v, d)` goes to `(M v, M d)`.
pub fn cube_sticker_symmetries(n: usize, faces: &str) -> Vec<Vec<u8>> {
    let stickers = sticker_list(n);
    let normal = |face: char| {
        let &(_, axis, side) = FACES.iter().find(|f| f.0 == face).expect("a face letter");
        let mut v = [0; 3];
        v[axis] = side;
        v
    };
    let normals: Vec<Vec3> = faces.chars().map(normal).collect();
    let mut out = Vec::new();
    for axes in [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] {
        for signs in 0..8 {
            let mut m: Motion = [[0; 3]; 3];
            for (row, &axis) in axes.iter().enumerate() {
                m[row][axis] = if signs >> row & 1 == 1 { -1 } else { 1 };
            }
            if !normals.iter().all(|&v| normals.contains(&apply_motion(&m, v))) {
                continue;
            }
            let image = stickers
                .iter()
                .map(|&(v, d)| {
                    let to = (apply_motion(&m, v), apply_motion(&m, d));
                    stickers.iter().position(|&x| x == to).expect("motions keep stickers") as u8
                })
                .collect();
            out.push(image);
        }
    }
    out
}

/// Corner twists under the `.tws` move data of [`cube_tws`] (positions and
/// per-position twists), for a BFS over orientations alone: the state is
/// the twist of each corner position.
pub fn corner_twist_moves(faces: &str) -> Vec<(Vec<usize>, Vec<usize>)> {
    faces
        .chars()
        .map(|face| {
            let &(_, axis, side) = FACES.iter().find(|f| f.0 == face).expect("a face letter");
            let mut normal = [0; 3];
            normal[axis] = side;
            set_move(&positions(0), normal)
        })
        .collect()
}

/// A rigid motion of the cube (rotation or mirror image) as an integer
/// matrix: `v ↦ M v`.
pub type Motion = [[i32; 3]; 3];

fn apply_motion(m: &Motion, v: Vec3) -> Vec3 {
    [dot(m[0], v), dot(m[1], v), dot(m[2], v)]
}

/// The `.tws` text of the 2×2×2 cube's corner *positions* alone (one set,
/// no orientation: distinct pieces, so symmetry reduction applies), quarter
/// turns of `faces` as moves, and each motion of `symmetries` as a
/// `Symmetry` block: the motion carries the corner at `v` to `M v`, written
/// as a move would be (position `M v` receives the content of `v`).
pub fn corner_positions_tws(faces: &str, symmetries: &[(&str, Motion)]) -> String {
    let places = positions(0);
    let id: Vec<usize> = (0..places.len()).collect();
    let mut text = format!(
        "# corner positions of the 2x2x2 cube, moves {faces}\nSet CORNERS {} 1\nSolved\nCORNERS\n{}\nEnd\n",
        places.len(),
        line(&id, true)
    );
    for face in faces.chars() {
        let (perm, _) = set_move(&places, face_normal(face));
        text += &format!("Move {}\nCORNERS\n{}\nEnd\n", face, line(&perm, true));
    }
    for (name, m) in symmetries {
        let mut perm = id.clone();
        for (s, &v) in places.iter().enumerate() {
            let to = apply_motion(m, v);
            perm[places.iter().position(|&p| p == to).expect("motions keep corners")] = s;
        }
        text += &format!("Symmetry {}\nCORNERS\n{}\nEnd\n", name, line(&perm, true));
    }
    text
}

/// Quarter turns of `faces` on the corner positions, as image lists (slot
/// `s`'s content goes to `g[s]`), with their half and inverse turns when
/// `all_powers` (the half-turn metric) or only their inverses.
pub fn corner_position_generators(faces: &str, all_powers: bool) -> Vec<Vec<u8>> {
    let places = positions(0);
    let mut gens = Vec::new();
    for face in faces.chars() {
        let normal = face_normal(face);
        let quarter: Vec<u8> = places
            .iter()
            .map(|&v| {
                let to = if dot(v, normal) == 1 { turn(normal, v) } else { v };
                places.iter().position(|&p| p == to).expect("turns keep corners") as u8
            })
            .collect();
        let power = |k: usize| -> Vec<u8> {
            (0..quarter.len())
                .map(|s| (0..k).fold(s as u8, |x, _| quarter[x as usize]))
                .collect()
        };
        let kept: &[usize] = if all_powers { &[1, 2, 3] } else { &[1, 3] };
        gens.extend(kept.iter().map(|&k| power(k)));
    }
    gens
}

fn face_normal(face: char) -> Vec3 {
    let &(_, axis, side) = FACES.iter().find(|f| f.0 == face).expect("a face letter");
    let mut normal = [0; 3];
    normal[axis] = side;
    normal
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_face_turn_cycles_four_cubies_of_each_kind() {
        let (perm, ori) = set_move(&positions(0), [0, 1, 0]);
        assert_eq!(perm.iter().enumerate().filter(|(j, &s)| *j != s).count(), 4);
        // U keeps U stickers on U: no corner twists.
        assert!(ori.iter().all(|&o| o == 0));
        let (_, ori) = set_move(&positions(0), [1, 0, 0]);
        // R twists its four corners, by a total that is 0 mod 3.
        assert_eq!(ori.iter().filter(|&&o| o != 0).count(), 4);
        assert_eq!(ori.iter().sum::<usize>() % 3, 0);
        // Four quarter turns are the identity on positions.
        let mut v = [1, 1, 1];
        for _ in 0..4 {
            v = turn([1, 0, 0], v);
        }
        assert_eq!(v, [1, 1, 1]);
    }
}
