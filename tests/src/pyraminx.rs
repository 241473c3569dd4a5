//! The pyraminx without its tips, derived here from the tetrahedron's
//! geometry: 4 axial pieces that turn in place (3 stickers each) and 6
//! edges (2 stickers), 933,120 positions. A `.tws` text for `cayley`, and
//! the same turns and the tetrahedron's 24 rigid motions as sticker
//! permutations for the plain searches of the tests.
//!
//! Vertices are `v_i` = (1,1,1), (1,−1,−1), (−1,1,−1), (−1,−1,1); the
//! face opposite `v_k` points along `−v_k`. The axial piece of vertex `i`
//! sits at `v_i` with stickers on the faces `−v_k`, `k ≠ i`; the edge of
//! `i < j` sits at `v_i + v_j` with stickers on the two other faces. Turn
//! `i` rotates the layer of vertex `i` (its axial piece and its three
//! edges) by 120° about `v_i`.

type V = [i32; 3];

const VERTICES: [V; 4] = [[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]];

/// Turn names, by vertex.
const TURNS: [&str; 4] = ["U", "L", "R", "B"];

fn neg(v: V) -> V {
    [-v[0], -v[1], -v[2]]
}

fn det(a: V, b: V, c: V) -> i32 {
    a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0])
}

/// `M v` for a 3×3 integer matrix.
fn mul(m: &[V; 3], v: V) -> V {
    m.map(|row| row.iter().zip(&v).map(|(a, b)| a * b).sum())
}

/// The 120° rotation about `v_i` taking `v_j` to `v_k` for the other
/// vertices in cyclic order: about (1,1,1) it is `(x,y,z) ↦ (z,x,y)`; the
/// sign change taking `v_0` to `v_i` carries it to the other vertices.
fn rotation(i: usize) -> [V; 3] {
    let s = VERTICES[i];
    // D C D with D = diag(s) and C the cyclic shift.
    [[0, 0, s[0] * s[2]], [s[1] * s[0], 0, 0], [0, s[2] * s[1], 0]]
}

/// Pieces as (position, sticker directions in a fixed order): axial pieces
/// first, their stickers ordered as a positive frame (so a rotation shifts
/// the list cyclically), then edges.
fn pieces() -> Vec<(V, Vec<V>)> {
    // The faces not opposite any of the vertices `ends`.
    let faces_off =
        |ends: &[usize]| -> Vec<V> { (0..4).filter(|k| !ends.contains(k)).map(|k| neg(VERTICES[k])).collect() };
    let mut out = Vec::new();
    for (i, &v) in VERTICES.iter().enumerate() {
        let mut faces = faces_off(&[i]);
        if det(faces[0], faces[1], faces[2]) < 0 {
            faces.swap(1, 2);
        }
        out.push((v, faces));
    }
    for (i, a) in VERTICES.iter().enumerate() {
        for (j, b) in VERTICES.iter().enumerate().skip(i + 1) {
            let position = [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
            out.push((position, faces_off(&[i, j])));
        }
    }
    out
}

/// True when the piece at `position` turns with vertex `i`'s layer.
fn in_layer(i: usize, position: V) -> bool {
    let v = VERTICES[i];
    position == v || position.iter().zip(&v).map(|(a, b)| a * b).sum::<i32>() == 2
}

/// The `.tws` text: sets AXIAL (4, twists mod 3) and EDGE (6, flips), one
/// move per vertex turn (twsearch adds its inverse).
pub fn pyraminx_tws() -> String {
    let all = pieces();
    let (axial, edges) = all.split_at(4);
    let mut text = String::from("# pyraminx without tips, from the tetrahedron's geometry\nName PyraminxNoTips\n\n");
    text += "Set AXIAL 4 3\nSet EDGE 6 2\n\nSolved\nAXIAL\n1 2 3 4\n0 0 0 0\nEDGE\n1 2 3 4 5 6\n0 0 0 0 0 0\nEnd\n";
    for (i, name) in TURNS.iter().enumerate() {
        text += &format!("\nMove {name}\n");
        for (set, group) in [("AXIAL", axial), ("EDGE", edges)] {
            let (perm, twist) = set_turn(group, i);
            let line =
                |xs: &[usize], plus: usize| xs.iter().map(|x| (x + plus).to_string()).collect::<Vec<_>>().join(" ");
            text += &format!("{set}\n{}\n{}\n", line(&perm, 1), line(&twist, 0));
        }
        text += "End\n";
    }
    text
}

/// One set under turn `i`, twsearch style: position `d` receives the
/// content of position `perm[d]`; the piece leaving `s` gains `twist[s]`
/// (how far its first sticker moves along the destination's list).
fn set_turn(group: &[(V, Vec<V>)], i: usize) -> (Vec<usize>, Vec<usize>) {
    let r = rotation(i);
    let mut perm: Vec<usize> = (0..group.len()).collect();
    let mut twist = vec![0; group.len()];
    for (s, (position, faces)) in group.iter().enumerate() {
        if !in_layer(i, *position) {
            continue;
        }
        let d = group
            .iter()
            .position(|(p, _)| *p == mul(&r, *position))
            .expect("turns keep pieces");
        perm[d] = s;
        let first = mul(&r, faces[0]);
        twist[s] = group[d].1.iter().position(|&f| f == first).expect("stickers land");
    }
    (perm, twist)
}

/// Every sticker as (piece position, face direction).
fn stickers() -> Vec<(V, V)> {
    pieces()
        .into_iter()
        .flat_map(|(p, faces)| faces.into_iter().map(move |f| (p, f)))
        .collect()
}

/// The sticker permutation of a linear map applied to the stickers for
/// which `keep` holds (the others stay).
fn sticker_map(m: &[V; 3], keep: impl Fn(V) -> bool) -> Vec<u8> {
    let all = stickers();
    all.iter()
        .map(|&(p, f)| {
            let to = if keep(p) { (mul(m, p), mul(m, f)) } else { (p, f) };
            all.iter().position(|&x| x == to).expect("maps keep stickers") as u8
        })
        .collect()
}

/// The turns and their inverses as sticker permutations (image lists).
pub fn pyraminx_sticker_generators() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for i in 0..4 {
        let turn = sticker_map(&rotation(i), |p| in_layer(i, p));
        let mut inverse = vec![0u8; turn.len()];
        for (s, &t) in turn.iter().enumerate() {
            inverse[t as usize] = s as u8;
        }
        out.push(turn);
        out.push(inverse);
    }
    out
}

/// The tetrahedron's 24 rigid motions (rotations and mirror images: the
/// signed permutation matrices that keep the set of vertices) as sticker
/// permutations.
pub fn pyraminx_sticker_symmetries() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for axes in [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] {
        for signs in 0..8 {
            let mut m = [[0; 3]; 3];
            for (row, &axis) in axes.iter().enumerate() {
                m[row][axis] = if signs >> row & 1 == 1 { -1 } else { 1 };
            }
            if VERTICES.iter().all(|&v| VERTICES.contains(&mul(&m, v))) {
                out.push(sticker_map(&m, |_| true));
            }
        }
    }
    out
}

/// Sticker permutations (of [`pyraminx_sticker_generators`] or
/// [`pyraminx_sticker_symmetries`]) restricted to the edges' 12 stickers,
/// which come after the axial pieces' 12 and which every turn and motion
/// keeps among themselves: the pyraminx's edges alone.
pub fn edge_stickers_only(perms: &[Vec<u8>]) -> Vec<Vec<u8>> {
    perms
        .iter()
        .map(|p| {
            p[12..]
                .iter()
                .map(|&s| s.checked_sub(12).expect("edges stay edges"))
                .collect()
        })
        .collect()
}
