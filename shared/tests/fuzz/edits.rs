//! Mutations of valid inputs: the edits a fuzzer makes (flipped, inserted,
//! deleted and repeated bytes, truncation), plus the tokens that the text
//! formats give meaning to, so that mutated text stays close enough to the
//! grammar to reach the deeper checks.

use proptest::prelude::*;

/// Cases of one fuzz target: none is saved to a regression file, because
/// the tests must never write into the source tree (a failure prints its
/// minimal input instead).
pub fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Tokens that mean something to the spec, perm-file or `.tws` grammar, and
/// numbers at the edges of what the parsers accept.
const TOKENS: &[&str] = &[
    "(",
    ")",
    ",",
    ":",
    " ",
    "\n",
    "#",
    "'",
    "-",
    "x",
    "0",
    "1",
    "2",
    "3",
    "255",
    "256",
    "257",
    "18446744073709551616",
    "99999999999999999999999",
    "-1",
    "End",
    "Set",
    "Solved",
    "Move",
    "Name",
    "Symmetry",
    "symmetry ",
    " --track ",
    " --directed",
    " --no-symmetry",
    "perm:",
    "tws:",
    "loopover:",
    "\u{b7}",
    "\0",
];

/// One edit; positions are taken modulo the input's length.
#[derive(Clone, Debug)]
pub enum Edit {
    /// XOR a byte with a non-zero mask (so the byte changes).
    Flip(usize, u8),
    Insert(usize, u8),
    InsertToken(usize, usize),
    Delete(usize, usize),
    /// Copy `len` bytes from one place to another.
    Repeat(usize, usize, usize),
    Truncate(usize),
}

/// One to six edits.
pub fn edits() -> impl Strategy<Value = Vec<Edit>> {
    let edit = prop_oneof![
        (any::<usize>(), 1..=255u8).prop_map(|(at, mask)| Edit::Flip(at, mask)),
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Edit::Insert(at, byte)),
        (any::<usize>(), 0..TOKENS.len()).prop_map(|(at, t)| Edit::InsertToken(at, t)),
        (any::<usize>(), 1..8usize).prop_map(|(at, len)| Edit::Delete(at, len)),
        (any::<usize>(), any::<usize>(), 1..16usize).prop_map(|(from, to, len)| Edit::Repeat(from, to, len)),
        any::<usize>().prop_map(Edit::Truncate),
    ];
    prop::collection::vec(edit, 1..=6)
}

/// Applies `edits` to `bytes` in order.
pub fn apply(bytes: &mut Vec<u8>, edits: &[Edit]) {
    for edit in edits {
        // Positions modulo the length, or 0 for an empty input.
        let at = |p: usize, extra: usize| p % (bytes.len() + extra).max(1);
        match *edit {
            Edit::Flip(p, mask) if !bytes.is_empty() => {
                let i = at(p, 0);
                bytes[i] ^= mask;
            }
            Edit::Flip(..) => {}
            Edit::Insert(p, byte) => {
                let i = at(p, 1);
                bytes.insert(i, byte);
            }
            Edit::InsertToken(p, t) => {
                let i = at(p, 1);
                bytes.splice(i..i, TOKENS[t].bytes());
            }
            Edit::Delete(p, len) if !bytes.is_empty() => {
                let i = at(p, 0);
                bytes.drain(i..(i + len).min(bytes.len()));
            }
            Edit::Delete(..) => {}
            Edit::Repeat(from, to, len) if !bytes.is_empty() => {
                let from = at(from, 0);
                let piece: Vec<u8> = bytes[from..(from + len).min(bytes.len())].to_vec();
                let to = at(to, 1);
                bytes.splice(to..to, piece);
            }
            Edit::Repeat(..) => {}
            Edit::Truncate(p) => {
                let len = at(p, 1);
                bytes.truncate(len);
            }
        }
    }
}

/// Inputs for a text parser: ones that `generated` makes, as they are
/// (weight `plain`) or mutated (weight `mutated`), and any text at all
/// (weight 1, up to 60 characters).
pub fn inputs<S>(generated: fn() -> S, plain: u32, mutated: u32) -> impl Strategy<Value = String>
where
    S: Strategy<Value = String> + 'static,
{
    prop_oneof![
        plain => generated(),
        mutated => (generated(), edits()).prop_map(|(text, e)| mutate_text(&text, &e)),
        1 => "\\PC{0,60}",
    ]
}

/// `text` after `edits`, as text (invalid UTF-8 replaced, as a reader of a
/// damaged file would see it).
pub fn mutate_text(text: &str, edits: &[Edit]) -> String {
    let mut bytes = text.as_bytes().to_vec();
    apply(&mut bytes, edits);
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Checks a refusal: a non-empty, one-line message.
pub fn assert_clear(message: &str, input: &str) {
    assert!(!message.trim().is_empty(), "empty error for {:?}", input);
    assert!(
        !message.contains('\n'),
        "multi-line error {:?} for {:?}",
        message,
        input
    );
}

/// [`assert_clear`] for a message that quotes its whole input: one line
/// unless the input itself has several.
pub fn assert_clear_quoting(message: &str, input: &str) {
    if input.contains(['\n', '\r']) {
        assert!(!message.trim().is_empty(), "empty error for {:?}", input);
    } else {
        assert_clear(message, input);
    }
}
