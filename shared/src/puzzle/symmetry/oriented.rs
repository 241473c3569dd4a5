//! Symmetries of puzzles whose distinct pieces have orientations (`.tws`
//! files such as the 2×2×2 cube), found by search: the conjugations that
//! map the move set onto itself.
//!
//! A slot `x` of orientation modulus `n` owns the points `(x, t)`, `t < n`,
//! and a move is the point permutation `(x, t) ↦ (m(x), t + w_m(x))`
//! ([`Puzzle::point_generators`]). A symmetry is a point permutation `Σ`
//! with `Σ M Σ⁻¹ = M` that keeps each slot's points together:
//! `Σ(x, t) = (s(x), u·t + a(x))`, with `u` a unit mod `n` (−1 for a
//! mirror image, which turns twists the other way) and `a` an offset per
//! slot. Conjugating a state keeps its distance from solved, as for slot
//! symmetries (`super`), and fixes solved.
//!
//! The point group comes from the same backtrack search as slot
//! symmetries (`search.rs`), run on points; every element is then listed
//! and checked to keep slots together. Different elements can conjugate
//! alike: adding one constant to every twist of an orbit commutes with
//! every move. What a symmetry does to states is fixed by what it does to
//! the moves (they generate every state), so elements are kept one per
//! **move map** `m ↦ Σ m Σ⁻¹`: 48 for the 2×2×2 cube, whose point group
//! has 144 elements.
//!
//! Found, not yet used: symmetry reduction (`space/reduced/`) stores keys
//! and fibers of distinct pieces without orientation. These symmetries
//! are what a reduced space of oriented pieces would conjugate by.

use super::search::search_group;
use super::MAX_ORDER;
use crate::puzzle::perm::Perm;
use crate::puzzle::Puzzle;
use std::collections::{HashMap, HashSet};

/// One symmetry of a puzzle with oriented pieces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrientedSymmetry {
    /// Slot map `s`: the content of slot `x` goes to `s(x)`.
    pub slots: Perm,
    /// Per slot `x`: twist `t` there becomes `unit[x]·t + offset[x]` at
    /// `s(x)` (mod the slot's modulus).
    pub unit: Vec<u8>,
    /// See [`Self::unit`].
    pub offset: Vec<u8>,
    /// Index of the move each move is conjugated to.
    pub moves: Vec<usize>,
}

/// Every symmetry of a puzzle with oriented pieces, one per move map; the
/// identity first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrientedSymmetries {
    /// The elements.
    pub elements: Vec<OrientedSymmetry>,
    /// Orientation modulus of each slot.
    modulus: Vec<u8>,
    /// The class of the piece whose home is each slot.
    class_at_home: Vec<u8>,
    /// The home slot of each class (one piece per class).
    home_of_class: Vec<u8>,
}

impl OrientedSymmetries {
    /// Number of symmetries.
    pub fn order(&self) -> usize {
        self.elements.len()
    }

    /// Element `k` applied to a coded state (classes, then twists):
    /// `Σ g Σ⁻¹`. The piece at slot `y` (home `h`, twist `t`) becomes the
    /// piece with home `s(h)`, at `s(y)`, twisted `u·t + a(y) − a(h)`.
    pub fn conjugate(&self, k: usize, state: &[u8]) -> Vec<u8> {
        let mut out = vec![0u8; state.len()];
        self.conjugate_into(k, state, &mut out);
        out
    }

    /// The classes of [`Self::conjugate`] alone, from a state's classes
    /// (what a symmetry does to the arrangement does not depend on twists).
    pub fn conjugate_cells(&self, k: usize, cells: &[u8], out: &mut [u8]) {
        let e = &self.elements[k];
        for (y, &class) in cells.iter().enumerate() {
            let home = self.home_of_class[class as usize] as usize;
            out[e.slots[y] as usize] = self.class_at_home[e.slots[home] as usize];
        }
    }

    /// The home slot of a class's piece.
    pub fn home_of(&self, class: u8) -> usize {
        self.home_of_class[class as usize] as usize
    }

    /// The index of the inverse of element `k` (the one whose move map
    /// undoes `k`'s).
    pub fn inverse_of(&self, k: usize) -> usize {
        let moves = &self.elements[k].moves;
        self.elements
            .iter()
            .position(|e| moves.iter().enumerate().all(|(m, &image)| e.moves[image] == m))
            .expect("the elements form a group")
    }

    /// The distinct conjugates of a coded state.
    pub fn orbit(&self, state: &[u8]) -> Vec<Vec<u8>> {
        let mut images: Vec<Vec<u8>> = (0..self.order()).map(|k| self.conjugate(k, state)).collect();
        images.sort_unstable();
        images.dedup();
        images
    }

    /// [`Self::conjugate`] into `out` (`2n` bytes).
    pub fn conjugate_into(&self, k: usize, state: &[u8], out: &mut [u8]) {
        let e = &self.elements[k];
        let n = self.modulus.len();
        for y in 0..n {
            let home = self.home_of_class[state[y] as usize] as usize;
            let to = e.slots[y] as usize;
            let modulus = u32::from(self.modulus[y]);
            out[to] = self.class_at_home[e.slots[home] as usize];
            let twist = u32::from(e.unit[y]) * u32::from(state[n + y]) + u32::from(e.offset[y]) + modulus
                - u32::from(e.offset[home]);
            out[n + to] = (twist % modulus) as u8;
        }
    }
}

/// Most elements of the point group listed (symmetries times the
/// constant twists of each orbit, which conjugate as the identity).
const MAX_POINT_ELEMENTS: usize = 64 * MAX_ORDER;

/// The symmetries of a coded puzzle of distinct oriented pieces, or why
/// they are not searched for.
pub fn find_oriented_symmetries(puzzle: &Puzzle) -> Result<OrientedSymmetries, String> {
    let coding = match &puzzle.coding {
        Some(c) if c.has_orientation() => c,
        _ => return Err("the puzzle has no oriented pieces".into()),
    };
    let n = puzzle.slots;
    if puzzle.moves.iter().any(|m| m.guard.is_some()) {
        return Err("symmetries are not searched for guarded moves".into());
    }
    if coding.wild.iter().any(|&w| w) {
        return Err("symmetries are not searched when some orientations are ignored".into());
    }
    let mut home_of_class = vec![u8::MAX; n];
    for (slot, &class) in puzzle.solved[..n].iter().enumerate() {
        match home_of_class.get_mut(class as usize) {
            Some(home) if *home == u8::MAX => *home = slot as u8,
            _ => return Err("symmetries of oriented pieces are searched for distinct pieces only".into()),
        }
    }
    if puzzle.solved[n..].iter().any(|&t| t != 0) {
        return Err("symmetries are searched only when solved has every twist 0".into());
    }
    let (points, degree) = puzzle.point_generators();
    let start: Vec<usize> = coding
        .modulus
        .iter()
        .scan(0usize, |sum, &m| {
            *sum += m as usize;
            Some(*sum - m as usize)
        })
        .collect();
    let perms: Vec<Vec<u16>> = points
        .iter()
        .map(|p| p.images().iter().map(|&x| x as u16).collect())
        .collect();
    let group = search_group(degree, &perms)?;
    let index: HashMap<&[u8], usize> = points.iter().enumerate().map(|(i, p)| (p.images(), i)).rev().collect();
    let generators: Vec<Perm> = group.generators.into_iter().map(|(_, g)| g).collect();
    let mut elements = Vec::new();
    let mut move_maps: HashSet<Vec<usize>> = HashSet::new();
    for sigma in close(degree, &generators)? {
        let inverse = sigma.inverse();
        let moves = points
            .iter()
            .map(|p| index.get(sigma.after(p).after(&inverse).images()).copied())
            .collect::<Option<Vec<usize>>>()
            .ok_or("the point search returned a map that is not a symmetry")?;
        if !move_maps.insert(moves.clone()) {
            continue;
        }
        let Some((slots, unit, offset)) = slot_form(&sigma, &coding.modulus, &start) else {
            return Err("a symmetry of the moves does not keep each piece's orientations together".into());
        };
        if elements.len() == MAX_ORDER {
            return Err(format!("the symmetries have more than {} elements", MAX_ORDER));
        }
        elements.push(OrientedSymmetry {
            slots,
            unit,
            offset,
            moves,
        });
    }
    let mut class_at_home = vec![0u8; n];
    for (class, &home) in home_of_class.iter().enumerate() {
        class_at_home[home as usize] = class as u8;
    }
    Ok(OrientedSymmetries {
        elements,
        modulus: coding.modulus.clone(),
        class_at_home,
        home_of_class,
    })
}

/// Every element of the group `generators` make, the identity first.
fn close(degree: usize, generators: &[Perm]) -> Result<Vec<Perm>, String> {
    let mut elements = vec![Perm::identity(degree)];
    let mut seen: HashSet<Vec<u8>> = HashSet::from([elements[0].images().to_vec()]);
    let mut next = 0;
    while next < elements.len() {
        for g in generators {
            let product = g.after(&elements[next]);
            if seen.insert(product.images().to_vec()) {
                if elements.len() == MAX_POINT_ELEMENTS {
                    return Err(format!("the symmetries have more than {} elements", MAX_ORDER));
                }
                elements.push(product);
            }
        }
        next += 1;
    }
    Ok(elements)
}

/// `σ` as a slot map with a unit and an offset per slot, or `None` when it
/// splits a slot's points or maps them other than `t ↦ u·t + a`.
fn slot_form(sigma: &Perm, modulus: &[u8], start: &[usize]) -> Option<(Perm, Vec<u8>, Vec<u8>)> {
    let slot_of_point: Vec<usize> = (0..modulus.len())
        .flat_map(|x| std::iter::repeat_n(x, modulus[x] as usize))
        .collect();
    let mut slots = Vec::with_capacity(modulus.len());
    let (mut unit, mut offset) = (Vec::new(), Vec::new());
    for x in 0..modulus.len() {
        let k = modulus[x] as usize;
        let to = slot_of_point[sigma[start[x]] as usize];
        if modulus[to] as usize != k {
            return None;
        }
        if (0..k).any(|t| slot_of_point[sigma[start[x] + t] as usize] != to) {
            return None;
        }
        let twist_of = |t: usize| sigma[start[x] + t] as usize - start[to];
        let a = twist_of(0);
        let u = if k > 1 { (twist_of(1) + k - a) % k } else { 1 };
        if (0..k).any(|t| twist_of(t) != (u * t + a) % k) {
            return None;
        }
        slots.push(to as u8);
        unit.push(u as u8);
        offset.push(a as u8);
    }
    Some((Perm::from_images(slots).ok()?, unit, offset))
}
