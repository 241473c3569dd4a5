//! [`FiberMap`]: a state map as one table of contributions per source
//! digit (see the parent module for why the target index is such a sum).

use super::{Digit, FiberLayout};
use crate::puzzle::perm::Perm;
use crate::space::rank::{factorial, low_rank, rank_parity, rank_perm, unrank_prefix};
use crate::space::reduced::keys::{map_mask, Key, MAX_BLOCKS};
use crate::space::reduced::tables::{DigitTable, Local, RowTables, TableCache};

mod fixed;

/// How a map gives the inner digits' part of a target index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapForm {
    /// One table for the whole row (one per forced parity when halved): a
    /// state costs one lookup, but the table (a row's states, 576 entries
    /// on the 4×4 Loopover) is built for each combination of the inner
    /// digits' position maps. For sources of many states.
    Rows,
    /// One table per inner digit (its arrangements: 24 entries on the 4×4
    /// Loopover), summed per state. For sources of a few states: their
    /// maps need no table beyond the digits' own, of which a puzzle has a
    /// few thousand. On the 4×4 Loopover's sparse levels the row tables of
    /// the maps of listed sources did not fit the table cache, which
    /// started over 15 times by depth 8 and rebuilt 262,000 tables. In a
    /// halved layout the last digit's value and the parity of the others
    /// give its full rank, whose table it reads. Until it did, a halved
    /// layout took `Rows` here too: the 3×5 Loopover's row tables (14,400
    /// entries, about 11,000 of them) overflowed the cache, which then
    /// built them for almost every map, 90 % of the CPU at depth 6.
    Digits,
}

/// A state map `z[g(i)] = f(y[i])` from the fiber of one key to the fiber
/// of its image key, as per-digit contributions to the target index.
pub struct FiberMap {
    outer: Vec<OuterDigit>,
    inner: Inner,
    /// Parity term of the source key (for a halved last digit).
    key_parity: bool,
    /// The layout's last digit is halved: its full rank depends on the
    /// parity of the others.
    halved: bool,
}

/// An outer source digit: its contribution by value, and where its value
/// is in the row number.
struct OuterDigit {
    table: Local<DigitTable>,
    size: usize,
    radix: u64,
    /// Stride in rows.
    stride: u64,
}

/// The contribution of a row's inner index.
enum Inner {
    /// Per forced parity of the row (one table unless halved): contribution
    /// of each inner index.
    Rows(Local<RowTables>),
    /// Each inner digit's contribution by value.
    Digits(Vec<InnerDigit>),
}

/// An inner source digit: its contribution by value, and where its value
/// is in the inner index.
struct InnerDigit {
    table: Local<DigitTable>,
    /// Pieces of the digit's block (its values are their arrangements).
    size: usize,
    radix: u64,
    stride: u64,
}

/// Where each inner index of one source row goes, relative to the row's
/// base.
#[derive(Clone, Copy)]
pub struct RowTable<'a>(RowKind<'a>);

#[derive(Clone, Copy)]
enum RowKind<'a> {
    Whole(&'a [u64]),
    /// The inner digits, and in a halved layout the parity the row brings
    /// (the key's and the outer digits').
    Digits(&'a [InnerDigit], Option<bool>),
}

impl<'a> RowTable<'a> {
    /// The whole row's table, for a map of [`MapForm::Rows`].
    #[inline]
    pub fn whole(&self) -> Option<&'a [u64]> {
        match self.0 {
            RowKind::Whole(table) => Some(table),
            RowKind::Digits(..) => None,
        }
    }

    /// The contribution of inner index `col`.
    #[inline]
    pub fn at(&self, col: usize) -> u64 {
        match self.0 {
            RowKind::Whole(table) => table[col],
            RowKind::Digits(digits, None) => digits
                .iter()
                .map(|d| d.table[((col as u64 / d.stride) % d.radix) as usize])
                .sum(),
            RowKind::Digits(digits, Some(row_parity)) => {
                // The last digit is the halved one: the parity of the
                // digits before it picks which of its two full ranks.
                let (last, others) = digits.split_last().expect("a halved layout has inner digits");
                let mut parity = row_parity;
                let mut sum = 0;
                for d in others {
                    let value = (col as u64 / d.stride) % d.radix;
                    parity ^= rank_parity(value, d.size);
                    sum += d.table[value as usize];
                }
                let value = (col as u64 / last.stride) % last.radix;
                sum + last.table[low_rank(value as usize, parity, true, last.size) as usize]
            }
        }
    }
}

/// The bytes that determine one digit's contributions: the digit, its
/// target digit, and its block's position maps μ (of `f` on the key's
/// slots) and λ (of `g` on the pieces). Equal keys give equal tables.
struct DigitKey {
    bytes: [u8; 2 + 2 * MAX_BLOCKS],
    len: usize,
}

impl DigitKey {
    fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

impl FiberMap {
    /// The map `f`, `g` on states of the fiber of `source` (`g` must map
    /// blocks onto blocks), in the form `form`. Returns the map and the
    /// target key. Its tables come from `tables` when an earlier map built
    /// them.
    pub fn new(
        layout: &FiberLayout,
        tables: &TableCache,
        source: &Key,
        f: &Perm,
        g: &Perm,
        form: MapForm,
    ) -> (FiberMap, Key) {
        let mut target = [0u64; MAX_BLOCKS];
        let mut to_block = [0usize; MAX_BLOCKS];
        for (b, pieces) in layout.blocks.iter().enumerate() {
            let (tb, _) = layout.place[g[pieces[0] as usize] as usize];
            to_block[b] = tb as usize;
            target[tb as usize] = map_mask(f, source[b]);
        }
        let digit_key = |i: usize| -> DigitKey {
            let block = layout.digits[i].block;
            let tb = to_block[block];
            let mut key = DigitKey {
                bytes: [0; 2 + 2 * MAX_BLOCKS],
                len: 2,
            };
            key.bytes[0] = i as u8;
            key.bytes[1] = layout.digit_of_block[tb].expect("same size") as u8;
            let mut bits = source[block];
            while bits != 0 {
                let image = f[bits.trailing_zeros() as usize];
                key.bytes[key.len] = (target[tb] & ((1u64 << image) - 1)).count_ones() as u8;
                key.len += 1;
                bits &= bits - 1;
            }
            for &p in &layout.blocks[block] {
                key.bytes[key.len] = layout.place[g[p as usize] as usize].1;
                key.len += 1;
            }
            key
        };
        let by_rank = |key: &DigitKey| digit_table(layout, tables, key);
        let split = layout.digits.iter().take_while(|d| d.outer).count();
        let row_bits = layout.row_words as u64 * 64;
        let outer = layout.digits[..split]
            .iter()
            .enumerate()
            .map(|(i, d)| OuterDigit {
                table: by_rank(&digit_key(i)),
                size: d.size,
                radix: d.radix,
                stride: d.stride / row_bits,
            })
            .collect();
        let inner_digits = split..layout.digits.len();
        let inner = if form == MapForm::Digits {
            Inner::Digits(
                inner_digits
                    .map(|i| InnerDigit {
                        table: by_rank(&digit_key(i)),
                        size: layout.digits[i].size,
                        radix: layout.digits[i].radix,
                        stride: layout.digits[i].stride,
                    })
                    .collect(),
            )
        } else {
            let keys: Vec<DigitKey> = inner_digits.map(digit_key).collect();
            let rows_key: Vec<u8> = keys.iter().flat_map(|k| k.bytes()).copied().collect();
            Inner::Rows(tables.rows(&rows_key, || {
                let contributions: Vec<Local<DigitTable>> = keys.iter().map(by_rank).collect();
                row_tables(layout, split, &contributions)
            }))
        };
        // Only a halved last digit reads the key's parity.
        let key_parity = layout.halved && layout.forced_parity(layout.key_parity(source), false);
        (
            FiberMap {
                outer,
                inner,
                key_parity,
                halved: layout.halved,
            },
            target,
        )
    }

    /// Contribution of source row `row` and the table of its inner indices.
    #[inline]
    pub fn row(&self, row: u64) -> (u64, RowTable<'_>) {
        let mut base = 0u64;
        let mut parity = self.key_parity;
        let halved = self.halved();
        for d in &self.outer {
            let value = (row / d.stride) % d.radix;
            base += d.table[value as usize];
            // Only a halved last digit has a table per parity.
            if halved {
                parity ^= rank_parity(value, d.size);
            }
        }
        (base, self.table_of_parity(parity))
    }

    /// [`Self::row`] of every row in order. The bases are summed digit by
    /// digit into one vector first, outer digit after outer digit: an
    /// iterator that counted the row number up digit by digit per row was
    /// 8% of a worker's time on the 4×4's dense levels.
    pub fn rows(&self) -> impl Iterator<Item = (u64, RowTable<'_>)> + '_ {
        let rows: u64 = self.outer.iter().map(|d| d.radix).product();
        let mut bases = Vec::with_capacity(rows as usize);
        bases.push((0u64, self.key_parity));
        let halved = self.halved();
        for d in &self.outer {
            let radix = d.radix as usize;
            let previous = bases.len();
            // Expand in place from the back, so that each entry's digits
            // stay ahead of the ones it makes.
            bases.resize(previous * radix, (0, false));
            for j in (0..previous).rev() {
                let (base, parity) = bases[j];
                for (v, contribution) in d.table[..radix].iter().enumerate().rev() {
                    let odd = halved && rank_parity(v as u64, d.size);
                    bases[j * radix + v] = (base + contribution, parity ^ odd);
                }
            }
        }
        bases
            .into_iter()
            .map(move |(base, parity)| (base, self.table_of_parity(parity)))
    }

    /// Whether the row's parity picks the inner contributions (a halved
    /// layout with inner digits).
    fn halved(&self) -> bool {
        match &self.inner {
            Inner::Rows(tables) => tables.len() == 2,
            Inner::Digits(digits) => self.halved && !digits.is_empty(),
        }
    }

    fn table_of_parity(&self, parity: bool) -> RowTable<'_> {
        RowTable(match &self.inner {
            Inner::Rows(tables) if tables.len() == 2 => RowKind::Whole(&tables[parity as usize]),
            Inner::Rows(tables) => RowKind::Whole(&tables[0]),
            Inner::Digits(digits) => RowKind::Digits(digits, self.halved().then_some(parity)),
        })
    }

    /// Target index of source index `index` (padded).
    pub fn apply(&self, index: u64, row_bits: u64) -> u64 {
        let (base, table) = self.row(index / row_bits);
        base + table.at((index % row_bits) as usize)
    }

    /// Set bits of `words` (a fiber of `row_words`-word rows) that the map
    /// sends to themselves.
    pub fn fixed_points(&self, words: &[u64], row_words: usize) -> u64 {
        let row_bits = row_words as u64 * 64;
        let mut count = 0u64;
        for (row, row_words_slice) in words.chunks(row_words).enumerate() {
            if row_words_slice.iter().all(|&w| w == 0) {
                continue;
            }
            let (base, table) = self.row(row as u64);
            let start = row as u64 * row_bits;
            for (w, &word) in row_words_slice.iter().enumerate() {
                let mut bits = word;
                while bits != 0 {
                    let col = w * 64 + bits.trailing_zeros() as usize;
                    count += u64::from(base + table.at(col) == start + col as u64);
                    bits &= bits - 1;
                }
            }
        }
        count
    }
}

/// Contribution of a digit by full rank, for the digit, target digit and
/// position maps `key` says; from `tables`, built on a miss.
fn digit_table(layout: &FiberLayout, tables: &TableCache, key: &DigitKey) -> Local<DigitTable> {
    tables.digit(key.bytes(), || {
        let d = &layout.digits[key.bytes[0] as usize];
        let td = &layout.digits[key.bytes[1] as usize];
        let (mu, lambda) = key.bytes()[2..].split_at(d.size);
        (0..factorial(d.size) as u64)
            .map(|rank| {
                let mut a = [0u8; MAX_BLOCKS];
                unrank_prefix(rank, d.size, d.size, &mut a);
                let mut image = [0u8; MAX_BLOCKS];
                for j in 0..d.size {
                    image[lambda[j] as usize] = mu[a[j] as usize];
                }
                layout.stored(td, rank_perm(&image[..d.size])) * td.stride
            })
            .collect()
    })
}

/// A row's inner tables (one per forced parity when halved) from the
/// contributions of the inner digits (those from `split` on).
fn row_tables(layout: &FiberLayout, split: usize, contributions: &[Local<DigitTable>]) -> RowTables {
    let inner: &[Digit] = &layout.digits[split..];
    let parities = if layout.halved { 2 } else { 1 };
    (0..parities)
        .map(|q| {
            (0..layout.row_states)
                .map(|col| {
                    let mut sum = 0u64;
                    let mut parity = false;
                    for (k, d) in inner.iter().enumerate() {
                        let mut value = (col / d.stride) % d.radix;
                        if layout.halved && split + k + 1 == layout.digits.len() {
                            value = low_rank(value as usize, (q == 1) ^ parity, true, d.size);
                        } else {
                            parity ^= rank_parity(value, d.size);
                        }
                        sum += contributions[k][value as usize];
                    }
                    sum
                })
                .collect()
        })
        .collect()
}
