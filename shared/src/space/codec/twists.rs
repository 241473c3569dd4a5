//! Twist digits of the codec, one group per slot orbit, and the low tables.
//!
//! A move adds its twist to the content leaving each slot, so the twists
//! after a move depend on the twists before it and on the move alone, not
//! on where the pieces are. The twist digits of a set of whole orbits can
//! therefore be the **low part** of a rank: every move maps it through one
//! fixed permutation of `0..W`, tabulated once per move ([`LowTables`]).

/// The twist digits of one slot orbit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct TwistOrbit {
    /// Oriented slots of the orbit, ascending.
    pub slots: Vec<u8>,
    pub modulus: u8,
    pub kind: TwistKind,
    /// Number of values of the orbit's digits together.
    pub radix: u64,
}

/// How an orbit's twists are ranked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TwistKind {
    /// Every slot's twist is a digit.
    Free,
    /// Every move keeps the orbit's twist sum, which is `total` when
    /// solved: the last slot's twist follows from the others.
    KeptSum { total: u8 },
    /// Some pieces of the orbit ignore their orientation (`?` in a `.tws`
    /// Solved block): the digits are the twists of the slots holding the
    /// other `pieces` pieces, in slot order, and depend on where they are.
    Wild { pieces: u32 },
}

impl TwistOrbit {
    /// Appends the orbit's digits to `rank`.
    #[inline]
    pub fn rank(&self, rank: u64, cells: &[u8], twists: &[u8], wild: &[bool]) -> u64 {
        let m = self.modulus as u64;
        let mut rank = rank;
        match self.kind {
            TwistKind::Free => {
                for &s in &self.slots {
                    rank = rank * m + twists[s as usize] as u64;
                }
            }
            TwistKind::KeptSum { .. } => {
                for &s in &self.slots[..self.slots.len() - 1] {
                    rank = rank * m + twists[s as usize] as u64;
                }
            }
            TwistKind::Wild { .. } => {
                for &s in self.slots.iter().filter(|&&s| !wild[cells[s as usize] as usize]) {
                    rank = rank * m + twists[s as usize] as u64;
                }
            }
        }
        rank
    }

    /// Writes the twists of `value` (a number below `radix`) into `twists`;
    /// a wild orbit reads `cells` to know which slots have digits.
    pub fn unrank(&self, mut value: u64, cells: &[u8], twists: &mut [u8], wild: &[bool]) {
        let m = self.modulus as u64;
        let mut take = |slot: u8, twists: &mut [u8]| {
            twists[slot as usize] = (value % m) as u8;
            value /= m;
        };
        match self.kind {
            TwistKind::Free => self.slots.iter().rev().for_each(|&s| take(s, twists)),
            TwistKind::KeptSum { total } => {
                let (&last, ranked) = self.slots.split_last().expect("an orbit has slots");
                ranked.iter().rev().for_each(|&s| take(s, twists));
                let sum: u32 = ranked.iter().map(|&s| twists[s as usize] as u32).sum();
                let m = self.modulus as u32;
                twists[last as usize] = ((total as u32 + m * 64 - sum % m) % m) as u8;
            }
            TwistKind::Wild { .. } => {
                for &s in self.slots.iter().rev() {
                    if wild[cells[s as usize] as usize] {
                        twists[s as usize] = 0;
                    } else {
                        take(s, twists);
                    }
                }
            }
        }
    }
}

/// Largest low part: tables stay small enough for the cache (18 moves of
/// the cube's corners, 2187 low states, take 157 KB both ways).
pub(super) const MAX_LOW_STATES: u64 = 1 << 13;

/// For every move, the permutation of low indices it induces, both ways.
///
/// With the group ranking (`codec/group.rs`) a block's low indices number
/// one coset of a twist lattice, its **label**, which the block determines;
/// a move then maps low indices through the row of the target block's
/// label (one label, row per move, otherwise). With the chain's tail as the
/// low part (`codec/tail.rs`) the rows are those of the tail subgroup's
/// multiplication table, the same for every move, and the label belongs to
/// a block and a move together ([`LowTables::labels_per_move`]).
#[derive(Clone, PartialEq, Eq, Default)]
pub struct LowTables {
    states: usize,
    /// Number of labels (1 without labels).
    labels: usize,
    /// Rows indexed by label alone (a multiplication table), not by move
    /// and label.
    shared_rows: bool,
    /// `forward[(m · labels + ℓ) · W + x]`: low index of the successor under
    /// move `m` of the state at `x`, whose successor's block has label `ℓ`.
    forward: Vec<u16>,
    /// `backward[(m · labels + ℓ) · W + y]`: low index of the predecessor
    /// under move `m` of the state at `y` in a block of label `ℓ`.
    backward: Vec<u16>,
}

impl std::fmt::Debug for LowTables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "LowTables({} states × {} labels × {} moves)",
            self.states,
            self.labels(),
            self.moves()
        )
    }
}

impl LowTables {
    /// Tabulates `orbits` (the low part, most significant first) under
    /// `moves`, given as (slot images, twist added to the content leaving
    /// each slot; empty = none).
    pub(super) fn build(slots: usize, orbits: &[TwistOrbit], moves: &[(&[u8], &[u8])]) -> LowTables {
        let states: u64 = orbits.iter().map(|o| o.radix).product();
        assert!(states <= MAX_LOW_STATES);
        let states = states as usize;
        let no_wild = [false; 256];
        let cells = vec![0u8; slots];
        let mut before = vec![0u8; slots];
        let mut after = vec![0u8; slots];
        LowTables::tabulate(states, moves.len(), |m, x| {
            let (to, twist) = moves[m];
            unrank_low(orbits, x as u64, &cells, &mut before, &no_wild);
            for orbit in orbits {
                for &s in &orbit.slots {
                    let added = twist.get(s as usize).copied().unwrap_or(0);
                    after[to[s as usize] as usize] = (before[s as usize] + added) % orbit.modulus;
                }
            }
            orbits.iter().fold(0, |r, o| o.rank(r, &cells, &after, &no_wild)) as usize
        })
    }

    /// The tables of a subgroup `L` acting on the low states:
    /// `backward[c · W + y]` is the index of `e_c` applied to low state `y`
    /// (`labels` = `|L|` rows of `W`); label `c` maps a target's low index
    /// `y` back through that row, and a source's forward through its inverse
    /// (the row is a permutation: `e_c` acts bijectively).
    pub(super) fn action(states: usize, labels: usize, backward: Vec<u16>) -> LowTables {
        let mut forward = vec![0u16; backward.len()];
        for (row, back) in forward.chunks_mut(states).zip(backward.chunks(states)) {
            for (y, &x) in back.iter().enumerate() {
                row[x as usize] = y as u16;
            }
        }
        LowTables {
            states,
            labels,
            shared_rows: true,
            forward,
            backward,
        }
    }

    /// The tables of `moves` maps of `states` low indices, `f(m, x)` the
    /// index move `m` sends `x` to (one label).
    pub(super) fn tabulate(states: usize, moves: usize, mut f: impl FnMut(usize, usize) -> usize) -> LowTables {
        let mut forward = vec![0u16; states * moves];
        let mut backward = vec![0u16; states * moves];
        for m in 0..moves {
            for x in 0..states {
                let y = f(m, x);
                forward[m * states + x] = y as u16;
                backward[m * states + y] = x as u16;
            }
        }
        LowTables {
            states,
            labels: 1,
            shared_rows: false,
            forward,
            backward,
        }
    }

    /// Tables given row by row, `labels` rows per move (see the fields).
    pub(super) fn with_rows(states: usize, labels: usize, forward: Vec<u16>, backward: Vec<u16>) -> LowTables {
        debug_assert_eq!(forward.len() % (states * labels).max(1), 0);
        LowTables {
            states,
            labels,
            shared_rows: false,
            forward,
            backward,
        }
    }

    /// Number of labels (1 unless the ranking has them).
    pub fn labels(&self) -> usize {
        self.labels.max(1)
    }

    /// Number of low states `W` (1 when there is no low part).
    pub fn states(&self) -> usize {
        self.states.max(1)
    }

    /// Number of moves tabulated (0 when the rows serve every move).
    pub fn moves(&self) -> usize {
        if self.shared_rows {
            return 0;
        }
        self.forward.len().checked_div(self.states * self.labels()).unwrap_or(0)
    }

    /// True when a label belongs to a block and a move together, not to a
    /// block alone.
    pub fn labels_per_move(&self) -> bool {
        self.shared_rows
    }

    /// The row of move `m` and label `label`.
    #[inline]
    fn row(&self, m: usize, label: usize) -> usize {
        if self.shared_rows {
            label
        } else {
            m * self.labels() + label
        }
    }

    /// Successor low indices under move `m` into a block of label `label`,
    /// indexed by the source's.
    #[inline]
    pub fn forward(&self, m: usize, label: usize) -> &[u16] {
        let row = self.row(m, label);
        &self.forward[row * self.states..(row + 1) * self.states]
    }

    /// Predecessor low indices under move `m` of a block of label `label`,
    /// indexed by the target's.
    #[inline]
    pub fn backward(&self, m: usize, label: usize) -> &[u16] {
        let row = self.row(m, label);
        &self.backward[row * self.states..(row + 1) * self.states]
    }
}

/// Writes the twists of low index `value` over `orbits` into `twists`.
pub(super) fn unrank_low(orbits: &[TwistOrbit], mut value: u64, cells: &[u8], twists: &mut [u8], wild: &[bool]) {
    for orbit in orbits.iter().rev() {
        orbit.unrank(value % orbit.radix, cells, twists, wild);
        value /= orbit.radix;
    }
}

/// Splits the orbits into block part and low part: the low part takes
/// whole orbits without wild pieces, largest radix first, while the
/// product stays at most [`MAX_LOW_STATES`]. Returns the orbits in rank
/// order (block part first) and the index of the first low orbit.
pub(super) fn order_for_low_part(orbits: Vec<TwistOrbit>) -> (Vec<TwistOrbit>, usize) {
    let mut candidates: Vec<usize> = (0..orbits.len())
        .filter(|&i| !matches!(orbits[i].kind, TwistKind::Wild { .. }))
        .collect();
    candidates.sort_by_key(|&i| std::cmp::Reverse(orbits[i].radix));
    let mut low = vec![false; orbits.len()];
    let mut product = 1u64;
    for i in candidates {
        if product.saturating_mul(orbits[i].radix) <= MAX_LOW_STATES {
            product *= orbits[i].radix;
            low[i] = true;
        }
    }
    let (mut block, mut tail) = (Vec::new(), Vec::new());
    for (orbit, is_low) in orbits.into_iter().zip(low) {
        if is_low {
            tail.push(orbit);
        } else {
            block.push(orbit);
        }
    }
    let first_low = block.len();
    block.extend(tail);
    (block, first_low)
}
