//! Error codes and user-defined error classes.
//!
//! A code is `class | index << 14`: its low 14 bits are the class, so
//! `MPI_Error_class` is a mask, and a predefined class is its own code.
//! Index 1..=RING_LAST names a recent error with its specific message (kept
//! in a ring of `RING_SIZE`; an evicted code still gives its class's text);
//! indexes above `RING_LAST` are codes added by `MPI_Add_error_code`.
//!
//! User-defined classes and codes carry [`DYNAMIC`] (bit 30, MPICH's
//! dynamic-code bit), so they lie above `MPI_ERR_LASTCODE` as MPI requires
//! (`MPI_LASTUSEDCODE` is never below it); a user class is `DYNAMIC | n`
//! with `n >= FIRST_USER_CLASS` in the class bits. Codes of predefined
//! classes stay at or below `MPI_ERR_LASTCODE`.
use std::collections::{BTreeSet, HashMap};
use std::os::raw::c_int;
use std::sync::LazyLock;

use crate::core::locks::{Level, OrderedGuard, OrderedMutex};

use super::error::{class_text, is_predefined_class, MpiError};
use crate::mpi_abi::constants::*;

const CLASS_BITS: u32 = 14;
const CLASS_MASK: c_int = (1 << CLASS_BITS) - 1;
/// The bit of user-defined classes and codes.
pub const DYNAMIC: c_int = 0x4000_0000;
const RING_SIZE: usize = 256;
const RING_LAST: c_int = 0x7fff;
/// User-defined classes start here (above every MPICH and MPIX class).
pub const FIRST_USER_CLASS: c_int = 128;

struct Registry {
    ring: Vec<Option<(c_int, String)>>,
    next_ring_index: c_int,
    /// Live user classes (`DYNAMIC | n`).
    user_classes: BTreeSet<c_int>,
    /// Class numbers `n` given back by `MPIX_Delete_error_class`, and the
    /// next never used.
    free_class_numbers: Vec<c_int>,
    next_class_number: c_int,
    /// Live user codes.
    user_codes: BTreeSet<c_int>,
    /// Code indexes given back by `MPIX_Delete_error_code`, and the next
    /// never used.
    free_code_indexes: Vec<c_int>,
    next_code_index: c_int,
    strings: HashMap<c_int, String>,
}

static REGISTRY: LazyLock<OrderedMutex<Registry>> = LazyLock::new(|| {
    OrderedMutex::new(
        Level::ErrorCodes,
        Registry {
            ring: vec![None; RING_SIZE],
            next_ring_index: 1,
            user_classes: BTreeSet::new(),
            free_class_numbers: Vec::new(),
            next_class_number: FIRST_USER_CLASS,
            user_codes: BTreeSet::new(),
            free_code_indexes: Vec::new(),
            next_code_index: RING_LAST + 1,
            strings: HashMap::new(),
        },
    )
});

fn registry() -> OrderedGuard<'static, Registry> {
    REGISTRY.lock()
}

impl Registry {
    /// Whether `class` is a user-defined class added so far.
    fn is_user_class(&self, class: c_int) -> bool {
        self.user_classes.contains(&class)
    }
}

/// The class bits of a code: a user class keeps [`DYNAMIC`].
fn class_bits(code: c_int) -> c_int {
    let low = code & CLASS_MASK;
    if code & DYNAMIC != 0 && low >= FIRST_USER_CLASS {
        DYNAMIC | low
    } else {
        low
    }
}

/// Whether `code` is a live user-defined class or code (what
/// `MPI_Add_error_class`/`MPI_Add_error_code` gave).
pub fn is_user_defined(code: c_int) -> bool {
    let reg = registry();
    reg.is_user_class(code) || reg.user_codes.contains(&code)
}

/// Records a raised error and returns the code that names it (the error's
/// own code when it carries one).
pub fn record(call: &str, error: &MpiError) -> c_int {
    if let Some(code) = error.code {
        return code;
    }
    let mut reg = registry();
    let index = reg.next_ring_index;
    reg.next_ring_index = if index >= RING_LAST { 1 } else { index + 1 };
    let code = class_bits(error.class) | (index << CLASS_BITS);
    let text = format!(
        "{call}: {} ({})",
        error.detail,
        class_label(&reg, error.class)
    );
    reg.ring[index as usize % RING_SIZE] = Some((code, text));
    code
}

/// `MPI_ERR_RANK`, or a user class's string (or number).
fn class_label(reg: &Registry, class: c_int) -> String {
    if reg.is_user_class(class) {
        return reg
            .strings
            .get(&class)
            .cloned()
            .unwrap_or_else(|| format!("error class {class}"));
    }
    super::error::class_name(class).to_string()
}

fn class_text_or_user(reg: &Registry, class: c_int) -> String {
    if let Some(s) = reg.strings.get(&class) {
        return s.clone();
    }
    format!(
        "{} ({})",
        class_text(class),
        super::error::class_name(class)
    )
}

/// The class of a code, or None when the code is not valid.
pub fn class_of(code: c_int) -> Option<c_int> {
    if code < 0 {
        return None;
    }
    let class = class_bits(code);
    let index = (code & !DYNAMIC) >> CLASS_BITS;
    let reg = registry();
    let class_ok = is_predefined_class(class) || reg.is_user_class(class);
    let index_ok = (index <= RING_LAST && (code & DYNAMIC == 0 || class & DYNAMIC != 0))
        || reg.user_codes.contains(&code);
    (class_ok && index_ok).then_some(class)
}

/// The text for a code: its specific message when it is still known,
/// otherwise the class's text.
pub fn string_of(code: c_int) -> Option<String> {
    let class = class_of(code)?;
    let reg = registry();
    if let Some(s) = reg.strings.get(&code) {
        return Some(s.clone());
    }
    if reg.user_codes.contains(&code) {
        // MPI 4.1 §9.5: a user code without a string of its own has the
        // empty string (not its class's).
        return Some(String::new());
    }
    let index = (code & !DYNAMIC) >> CLASS_BITS;
    if (1..=RING_LAST).contains(&index) {
        if let Some((c, text)) = &reg.ring[index as usize % RING_SIZE] {
            if *c == code {
                return Some(text.clone());
            }
        }
    }
    if reg.is_user_class(class) {
        return Some(reg.strings.get(&class).cloned().unwrap_or_default());
    }
    Some(class_text_or_user(&reg, class))
}

/// `MPI_Add_error_class`.
pub fn add_class() -> Result<c_int, MpiError> {
    let mut reg = registry();
    let n = match reg.free_class_numbers.pop() {
        Some(n) => n,
        None if reg.next_class_number <= CLASS_MASK => {
            reg.next_class_number += 1;
            reg.next_class_number - 1
        }
        None => {
            return Err(MpiError::new(
                MPI_ERR_OTHER,
                "no more error classes can be added",
            ))
        }
    };
    let class = DYNAMIC | n;
    reg.user_classes.insert(class);
    Ok(class)
}

/// `MPI_Add_error_code`.
pub fn add_code(class: c_int) -> Result<c_int, MpiError> {
    let mut reg = registry();
    let valid = is_predefined_class(class) || reg.is_user_class(class);
    if !valid {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!("{class} is not a valid error class"),
        ));
    }
    let index = match reg.free_code_indexes.pop() {
        Some(index) => index,
        None if reg.next_code_index < 1 << (30 - CLASS_BITS) => {
            reg.next_code_index += 1;
            reg.next_code_index - 1
        }
        None => {
            return Err(MpiError::new(
                MPI_ERR_OTHER,
                "no more error codes can be added",
            ))
        }
    };
    let code = DYNAMIC | class | (index << CLASS_BITS);
    reg.user_codes.insert(code);
    Ok(code)
}

/// `MPI_Add_error_string`: only user-defined classes and codes take one.
pub fn add_string(code: c_int, text: String) -> Result<(), MpiError> {
    let mut reg = registry();
    if !reg.is_user_class(code) && !reg.user_codes.contains(&code) {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!("{code} is not a user-defined error class or code"),
        ));
    }
    reg.strings.insert(code, text);
    Ok(())
}

/// `MPI_Delete_error_string` (MPICH's `MPIX_` extension, MPI 4.1): the
/// user-defined class or code goes back to the empty string.
pub fn delete_string(code: c_int) -> Result<(), MpiError> {
    let mut reg = registry();
    if !reg.is_user_class(code) && !reg.user_codes.contains(&code) {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!("{code} is not a user-defined error class or code"),
        ));
    }
    reg.strings.remove(&code);
    Ok(())
}

/// `MPI_Delete_error_code`: the user-defined code is no longer valid (its
/// value may be given again by `MPI_Add_error_code`).
pub fn delete_code(code: c_int) -> Result<(), MpiError> {
    let mut reg = registry();
    if !reg.user_codes.remove(&code) {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!("{code} is not a user-defined error code"),
        ));
    }
    reg.strings.remove(&code);
    reg.free_code_indexes.push((code & !DYNAMIC) >> CLASS_BITS);
    Ok(())
}

/// `MPI_Delete_error_class`: the user-defined class, once it has no codes
/// left, is no longer valid (its value may be given again).
pub fn delete_class(class: c_int) -> Result<(), MpiError> {
    let mut reg = registry();
    if !reg.is_user_class(class) {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!("{class} is not a user-defined error class"),
        ));
    }
    if reg.user_codes.iter().any(|&c| class_bits(c) == class) {
        return Err(MpiError::new(
            MPI_ERR_OTHER,
            format!("error class {class} still has codes (delete them first)"),
        ));
    }
    reg.user_classes.remove(&class);
    reg.strings.remove(&class);
    reg.free_class_numbers.push(class & !DYNAMIC);
    Ok(())
}

/// The largest code or class in use (the `MPI_LASTUSEDCODE` attribute),
/// never below `MPI_ERR_LASTCODE`.
pub fn last_used_code() -> c_int {
    let reg = registry();
    let last_class = reg.user_classes.last().copied().unwrap_or(0);
    let last_code = reg.user_codes.last().copied().unwrap_or(0);
    last_class.max(last_code).max(MPI_ERR_LASTCODE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_code_keeps_class_and_message() {
        let code = record(
            "MPI_Send",
            &MpiError::new(MPI_ERR_RANK, "rank 7 is not in 0..4"),
        );
        assert_ne!(code, MPI_ERR_RANK);
        assert_eq!(class_of(code), Some(MPI_ERR_RANK));
        let text = string_of(code).unwrap();
        assert!(
            text.contains("MPI_Send") && text.contains("rank 7"),
            "{text}"
        );
        assert_eq!(class_of(MPI_ERR_COMM), Some(MPI_ERR_COMM));
        assert!(code <= MPI_ERR_LASTCODE);
    }

    #[test]
    fn user_classes_codes_and_strings() {
        assert!(last_used_code() >= MPI_ERR_LASTCODE);
        let class = add_class().unwrap();
        assert!(
            class > MPI_ERR_LASTCODE,
            "user classes lie above MPI_ERR_LASTCODE"
        );
        let code = add_code(class).unwrap();
        assert!(code > MPI_ERR_LASTCODE);
        assert_eq!(class_of(code), Some(class));
        assert_eq!(class_of(class), Some(class));
        let other = add_code(MPI_ERR_OTHER).unwrap();
        assert!(other > MPI_ERR_LASTCODE);
        assert_eq!(class_of(other), Some(MPI_ERR_OTHER));
        let raised = record("MPI_Send", &MpiError::new(class, "mine"));
        assert_eq!(class_of(raised), Some(class));
        add_string(class, "my class".into()).unwrap();
        assert_eq!(
            string_of(code).unwrap(),
            "",
            "a code has no string of its own yet"
        );
        assert_eq!(string_of(other).unwrap(), "");
        add_string(code, "my error".into()).unwrap();
        assert_eq!(string_of(code).unwrap(), "my error");
        assert!(add_string(MPI_ERR_COMM, "nope".into()).is_err());
        assert!(add_code(9999).is_err());
        assert!(last_used_code() >= code);
        assert_eq!(class_of(-5), None);
        // Deleted codes and classes stop being valid and are given again.
        assert!(delete_class(class).is_err(), "it still has a code");
        delete_string(code).unwrap();
        assert_eq!(string_of(code).unwrap(), "");
        delete_code(code).unwrap();
        assert_eq!(class_of(code), None);
        assert!(delete_code(code).is_err());
        delete_class(class).unwrap();
        assert_eq!(class_of(class), None);
        let again = add_class().unwrap();
        assert_eq!(again, class, "the class number comes back");
        let code_again = add_code(again).unwrap();
        assert_eq!(code_again, code, "so does the code");
    }

    #[test]
    fn evicted_ring_entries_fall_back_to_the_class_text() {
        let first = record("MPI_Recv", &MpiError::new(MPI_ERR_TAG, "bad tag"));
        for _ in 0..RING_SIZE {
            record("MPI_Recv", &MpiError::new(MPI_ERR_COUNT, "x"));
        }
        let text = string_of(first).unwrap();
        assert!(
            text.contains("MPI_ERR_TAG") && !text.contains("bad tag"),
            "{text}"
        );
    }
}
