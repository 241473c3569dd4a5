//! How a puzzle's states are laid out as digits: the slot orbits the moves
//! generate, a digit per class and orbit, the twist digits of oriented
//! orbits, and the shard key's size (see the parent module's notes).

use super::arrangement;
use super::grouped::GroupRanking;
use super::twists::{order_for_low_part, LowTables, TwistKind, TwistOrbit};
use super::{ClassDigit, Codec, CodecError, CodecInput, MAX_CODED_SLOTS, TARGET_SHARD_BITS};
use crate::space::colex::Binomials;

impl Codec {
    /// Plans the ranking of the states of a puzzle; `shard_classes`
    /// overrides the automatic shard key size.
    pub fn plan(input: &CodecInput, shard_classes: Option<usize>) -> Result<Codec, CodecError> {
        let n = input.solved_cells.len();
        if n > MAX_CODED_SLOTS {
            return Err(CodecError::TooManySlots {
                slots: n,
                max: MAX_CODED_SLOTS,
            });
        }
        let binomials = Binomials::new();
        let orbits = slot_orbits(n, &input.moves);
        let class_count = input.solved_cells.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
        let mut wild = vec![false; 256];
        wild[..input.wild.len()].copy_from_slice(input.wild);
        let classes = class_digits(input.solved_cells, &orbits, &binomials);
        let twists = twist_orbits(input, &orbits, &wild);
        let log_states: f64 = classes
            .iter()
            .map(|c| c.radix)
            .chain(twists.iter().map(|t| t.radix))
            .map(|r| (r as f64).log2())
            .sum();
        // With identical pieces the group on slots is larger than the
        // positions, which are its cosets: the ranking tells how many.
        let identical = {
            let mut seen = [false; 256];
            input
                .solved_cells
                .iter()
                .any(|&c| std::mem::replace(&mut seen[c as usize], true))
        };
        // The group ranking when it ranks fewer states, or as many without
        // orientation: the class digits then have blocks of one state or of
        // one orbit's arrangements, the chain's tail up to 1,024 (twsearch's
        // `233`, 8! · 8! positions: blocks of 1 or 720).
        let class_states = log_states.exp2();
        let (fewer, no_more) = (class_states * (1.0 - 1e-9), class_states * (1.0 + 1e-9));
        let group = input
            .group_order
            .filter(|&order| ((order as f64) <= no_more || identical) && order < 1 << 63)
            .and_then(|order| GroupRanking::plan(input, order))
            .filter(|g| (g.states() as f64) < fewer || (twists.is_empty() && (g.states() as f64) <= no_more))
            .map(Box::new);
        if log_states >= 63.0 && group.is_none() {
            return Err(CodecError::TooManyStates {
                states: log_states.exp2(),
            });
        }
        let mut codec = match group {
            Some(group) => Codec {
                slots: n,
                class_count,
                classes: Vec::new(),
                twists: Vec::new(),
                first_low: 0,
                first_low_class: 0,
                wild,
                low: group.low().clone(),
                group: Some(group),
                shard_classes: 0,
                shard_blocks: 0,
                shards: 0,
                binomials,
            },
            None => {
                let (twists, first_low) = order_for_low_part(twists);
                // Without twists, the arrangement of an orbit can be the low part.
                let (classes, first_low_class) = if twists.is_empty() {
                    arrangement::order_for_low_orbit(classes, input.guarded_slots)
                } else {
                    let len = classes.len();
                    (classes, len)
                };
                let mut codec = Codec {
                    slots: n,
                    class_count,
                    classes,
                    twists,
                    first_low,
                    first_low_class,
                    wild,
                    low: LowTables::default(),
                    group: None,
                    shard_classes: 0,
                    shard_blocks: 0,
                    shards: 0,
                    binomials,
                };
                codec.low = if first_low_class < codec.classes.len() {
                    codec.arrangement_tables(&input.moves)
                } else {
                    LowTables::build(n, &codec.twists[first_low..], &input.moves)
                };
                codec
            }
        };
        let max = codec.class_digits();
        match shard_classes {
            Some(k) if k > max => return Err(CodecError::BadShardPieces { asked: k, max }),
            Some(k) => codec.set_shard_classes(k),
            None => {
                codec.set_shard_classes(0);
                while codec.shard_classes < max && codec.shard_states() > TARGET_SHARD_BITS {
                    codec.set_shard_classes(codec.shard_classes + 1);
                }
            }
        }
        Ok(codec)
    }

    fn set_shard_classes(&mut self, k: usize) {
        self.shard_classes = k;
        if let Some(group) = &self.group {
            self.shards = group.key_states(k);
            self.shard_blocks = group.blocks_below(k);
            return;
        }
        self.shards = self.classes[..k].iter().map(|c| c.radix).product();
        self.shard_blocks = self.classes[k..self.first_low_class]
            .iter()
            .map(|c| c.radix)
            .product::<u64>()
            * self.twists[..self.first_low].iter().map(|t| t.radix).product::<u64>();
    }
}

/// One digit per class and orbit the class occupies, in class order.
fn class_digits(solved_cells: &[u8], orbits: &[u64], binomials: &Binomials) -> Vec<ClassDigit> {
    let class_count = solved_cells.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
    let mut free_in_orbit: Vec<u32> = orbits.iter().map(|o| o.count_ones()).collect();
    let mut classes = Vec::new();
    for class in 0..class_count {
        let mask = (0..solved_cells.len())
            .filter(|&s| solved_cells[s] as usize == class)
            .fold(0u64, |m, s| m | 1 << s);
        // Moves keep pieces in their orbit, so a class spread over several
        // orbits has a fixed count in each: one digit per orbit.
        for (o, &orbit) in orbits.iter().enumerate().filter(|(_, &o)| o & mask != 0) {
            let count = (mask & orbit).count_ones();
            let radix = binomials.get(free_in_orbit[o], count);
            free_in_orbit[o] -= count;
            classes.push(ClassDigit {
                class: class as u8,
                count,
                orbit,
                radix,
            });
        }
    }
    classes
}

/// The twist digits of every orbit with oriented slots, in orbit order.
fn twist_orbits(input: &CodecInput, orbits: &[u64], wild: &[bool]) -> Vec<TwistOrbit> {
    let n = input.solved_cells.len();
    let mut out = Vec::new();
    for &orbit in orbits {
        let slots: Vec<u8> = (0..n as u8)
            .filter(|&s| orbit >> s & 1 == 1 && input.modulus[s as usize] > 1)
            .collect();
        let Some(&last) = slots.last() else { continue };
        let modulus = input.modulus[last as usize];
        let m = modulus as u64;
        let wild_pieces = slots
            .iter()
            .filter(|&&s| wild[input.solved_cells[s as usize] as usize])
            .count();
        let keeps_sum = input.moves.iter().all(|(_, twist)| {
            twist.is_empty() || slots.iter().map(|&s| twist[s as usize] as u32).sum::<u32>() % modulus as u32 == 0
        });
        let (kind, digits) = if wild_pieces > 0 {
            let pieces = (slots.len() - wild_pieces) as u32;
            (TwistKind::Wild { pieces }, pieces)
        } else if keeps_sum {
            let total = slots
                .iter()
                .map(|&s| input.solved_twists[s as usize] as u32)
                .sum::<u32>()
                % modulus as u32;
            (TwistKind::KeptSum { total: total as u8 }, slots.len() as u32 - 1)
        } else {
            (TwistKind::Free, slots.len() as u32)
        };
        // An orbit without digits (one oriented slot keeping its twist, or
        // only wild pieces) still writes its twists when unranked.
        out.push(TwistOrbit {
            slots,
            modulus,
            kind,
            radix: m.saturating_pow(digits),
        });
    }
    out
}

/// The orbits of the group the moves generate on slots, as masks.
pub(super) fn slot_orbits(n: usize, moves: &[(&[u8], &[u8])]) -> Vec<u64> {
    let mut root: Vec<usize> = (0..n).collect();
    fn find(root: &mut [usize], mut x: usize) -> usize {
        while root[x] != x {
            root[x] = root[root[x]];
            x = root[x];
        }
        x
    }
    for (perm, _) in moves {
        for (s, &t) in perm.iter().enumerate() {
            let (a, b) = (find(&mut root, s), find(&mut root, t as usize));
            root[a.max(b)] = a.min(b);
        }
    }
    let mut orbits: Vec<u64> = Vec::new();
    let mut orbit_of_root = vec![usize::MAX; n];
    for s in 0..n {
        let r = find(&mut root, s);
        if orbit_of_root[r] == usize::MAX {
            orbit_of_root[r] = orbits.len();
            orbits.push(0);
        }
        orbits[orbit_of_root[r]] |= 1 << s;
    }
    orbits
}
