//! A level's bits: [`popcount`], [`test_bit`] and [`set_bits`] on a shard's
//! words, and bit arrays in memory-mapped files ([`Plane`], [`PlaneMut`]:
//! one file per level of the in-process engine's scratch), which the kernel
//! reads as a plain `&[u64]`.

use memmap2::{Mmap, MmapMut};
use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// A writable bit array backed by a file.
pub struct PlaneMut {
    map: MmapMut,
    path: PathBuf,
}

/// A read-only bit array backed by a file.
pub struct Plane {
    map: Option<Mmap>,
    path: PathBuf,
}

impl PlaneMut {
    /// Creates (or truncates) `path` as `words` zeroed words and maps it.
    pub fn create(path: &Path, words: usize) -> io::Result<PlaneMut> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        file.set_len(words as u64 * 8)?;
        // SAFETY: the file was just created by this process in its own scratch
        // directory and is not shared with other writers while mapped; the
        // mapping is page-aligned, so viewing it as u64 words is aligned.
        let map = unsafe { MmapMut::map_mut(&file)? };
        Ok(PlaneMut {
            map,
            path: path.to_path_buf(),
        })
    }

    /// The words.
    pub fn words(&self) -> &[u64] {
        bytemuck::cast_slice(&self.map[..])
    }

    /// The words, writable.
    pub fn words_mut(&mut self) -> &mut [u64] {
        bytemuck::cast_slice_mut(&mut self.map[..])
    }

    /// Finishes writing and keeps the array as read-only.
    pub fn freeze(self) -> io::Result<Plane> {
        let map = self.map.make_read_only()?;
        Ok(Plane {
            map: Some(map),
            path: self.path,
        })
    }
}

impl Plane {
    /// Maps an existing file read-only.
    pub fn open(path: &Path) -> io::Result<Plane> {
        let file = File::open(path)?;
        let map = if file.metadata()?.len() == 0 {
            None
        } else {
            // SAFETY: level files are immutable once written (tasks write a
            // new file per level and never modify an old one), so the mapped
            // bytes cannot change underneath the borrow.
            Some(unsafe { Mmap::map(&file)? })
        };
        Ok(Plane {
            map,
            path: path.to_path_buf(),
        })
    }

    /// The words.
    pub fn words(&self) -> &[u64] {
        match &self.map {
            Some(map) => bytemuck::cast_slice(&map[..]),
            None => &[],
        }
    }

    /// The backing file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Number of set bits: the one count of the workspace. `count_ones` is the
/// POPCNT instruction because the workspace builds for x86-64-v2
/// (`.cargo/config.toml`); for baseline x86-64 it is a dozen instructions
/// per word (checked with `rustc -O --emit asm` and
/// `-C target-cpu=x86-64-v2`: five `popcnt`, unrolled, against none).
pub fn popcount(words: &[u64]) -> u64 {
    words.iter().map(|w| w.count_ones() as u64).sum()
}

/// Tests bit `i`.
#[inline]
pub fn test_bit(words: &[u64], i: usize) -> bool {
    (words[i >> 6] >> (i & 63)) & 1 == 1
}

/// Positions of the set bits of `words`, in order.
pub fn set_bits(words: &[u64]) -> SetBits<'_> {
    SetBits::new(words)
}

/// Indices of the set bits of `words`, in order.
pub struct SetBits<'a> {
    words: &'a [u64],
    word: usize,
    bits: u64,
}

impl<'a> SetBits<'a> {
    fn new(words: &'a [u64]) -> SetBits<'a> {
        SetBits {
            words,
            word: 0,
            bits: words.first().copied().unwrap_or(0),
        }
    }
}

impl Iterator for SetBits<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        while self.bits == 0 {
            self.word += 1;
            self.bits = *self.words.get(self.word)?;
        }
        let bit = self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some(self.word * 64 + bit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planes_roundtrip_through_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.bits");
        let mut p = PlaneMut::create(&path, 3).unwrap();
        p.words_mut()[1] = 0b1010;
        let frozen = p.freeze().unwrap();
        assert_eq!(popcount(frozen.words()), 2);
        let again = Plane::open(&path).unwrap();
        assert_eq!(set_bits(again.words()).collect::<Vec<_>>(), vec![65, 67]);
        assert_eq!(set_bits(&[]).count(), 0);
        assert_eq!(set_bits(&[0, 0, 1 << 63]).collect::<Vec<_>>(), vec![191]);
        assert!(test_bit(again.words(), 67));
    }
}
