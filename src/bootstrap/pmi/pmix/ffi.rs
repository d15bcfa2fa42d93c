//! The PMIx client library (`libpmix.so.2`, the C API of PMIx 4), loaded
//! with `dlopen` at the first use so that oxmpi has no link-time
//! dependency on it: a program that never runs under a PMIx launcher never
//! loads it. All of the module's `unsafe` is here; above it, safe calls
//! that own what they pass and copy what they get back.
//!
//! The C structs are declared from `pmix_common.h`'s layout (PMIx 4.2, the
//! same since PMIx 3 for what is used here); the test
//! `layout_matches_the_header` compiles a C program against the installed
//! header and compares sizes and offsets.
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;

/// `PMIX_MAX_NSLEN + 1`.
pub const NSPACE_LEN: usize = 256;
/// `PMIX_MAX_KEYLEN + 1`.
pub const KEY_LEN: usize = 512;

/// `PMIX_RANK_WILDCARD`: the job itself, for job-level keys.
pub const RANK_WILDCARD: u32 = u32::MAX - 1;

const PMIX_SUCCESS: c_int = 0;
/// `PMIX_ERR_NOT_FOUND`.
pub const ERR_NOT_FOUND: c_int = -46;
/// `PMIX_ERR_NOT_SUPPORTED`.
pub const ERR_NOT_SUPPORTED: c_int = -47;
/// `PMIX_ERR_DUPLICATE_KEY`.
pub const ERR_DUPLICATE_KEY: c_int = -53;
/// `PMIX_ERR_BAD_PARAM`.
const ERR_BAD_PARAM: c_int = -27;
/// `PMIX_GLOBAL`: a put visible to every process of the job.
const SCOPE_GLOBAL: u8 = 3;

// pmix_data_type_t values.
const TYPE_BOOL: u16 = 1;
const TYPE_STRING: u16 = 3;
const TYPE_SIZE: u16 = 4;
const TYPE_INT: u16 = 6;
const TYPE_INT32: u16 = 9;
const TYPE_UINT16: u16 = 13;
const TYPE_UINT32: u16 = 14;
const TYPE_UINT64: u16 = 15;
const TYPE_PROC: u16 = 22;
const TYPE_DATA_ARRAY: u16 = 39;
const TYPE_PROC_RANK: u16 = 40;

/// `pmix_proc_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Proc {
    nspace: [c_char; NSPACE_LEN],
    pub rank: u32,
}

/// The union of `pmix_value_t`: only the members read or written here,
/// plus room for its largest (`pmix_envar_t`, three words).
#[repr(C)]
#[derive(Clone, Copy)]
union ValueData {
    flag: bool,
    string: *mut c_char,
    size: usize,
    integer: c_int,
    int32: i32,
    uint16: u16,
    uint32: u32,
    uint64: u64,
    proc_: *mut Proc,
    darray: *mut DataArray,
    _room: [u64; 3],
}

/// `pmix_value_t`.
#[repr(C)]
#[derive(Clone, Copy)]
struct Value {
    kind: u16,
    data: ValueData,
}

/// `pmix_info_t`.
#[repr(C)]
struct Info {
    key: [c_char; KEY_LEN],
    flags: u32,
    value: Value,
}

/// `pmix_pdata_t`: a published key, its value and who published it.
#[repr(C)]
struct PData {
    proc_: Proc,
    key: [c_char; KEY_LEN],
    value: Value,
}

/// `pmix_data_array_t`.
#[repr(C)]
struct DataArray {
    kind: u16,
    size: usize,
    array: *mut c_void,
}

impl Proc {
    /// The process `rank` of namespace `nspace` (cut to the C field's size).
    pub fn new(nspace: &str, rank: u32) -> Proc {
        let mut p = Proc {
            nspace: [0; NSPACE_LEN],
            rank,
        };
        for (slot, byte) in p.nspace.iter_mut().zip(nspace.bytes().take(NSPACE_LEN - 1)) {
            *slot = byte as c_char;
        }
        p
    }

    /// This process's namespace.
    pub fn nspace(&self) -> String {
        let bytes: Vec<u8> = self
            .nspace
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

impl Info {
    /// A boolean directive (`PMIX_COLLECT_DATA`, `PMIX_OPTIONAL`...).
    fn flag(key: &str, on: bool) -> Info {
        let mut info = Info {
            key: [0; KEY_LEN],
            flags: 0,
            value: Value {
                kind: TYPE_BOOL,
                data: ValueData { _room: [0; 3] },
            },
        };
        info.value.data.flag = on;
        info.set_key(key);
        info
    }

    fn set_key(&mut self, key: &str) {
        set_key(&mut self.key, key);
    }

    /// A string-valued info pointing to `value`, which must outlive it.
    fn text(key: &str, value: &CString) -> Info {
        let mut info = Info::flag(key, false);
        info.value.kind = TYPE_STRING;
        info.value.data = ValueData { _room: [0; 3] };
        info.value.data.string = value.as_ptr().cast_mut();
        info
    }
}

/// Writes `key` into a key field (cut to the field's size, NUL-ended).
fn set_key(field: &mut [c_char; KEY_LEN], key: &str) {
    for (slot, byte) in field.iter_mut().zip(key.bytes().take(KEY_LEN - 1)) {
        *slot = byte as c_char;
    }
}

/// A directive passed with a request.
#[derive(Debug, Clone)]
pub enum Directive {
    Flag(&'static str, bool),
    Text(&'static str, String),
}

/// The directives as C infos, with the strings they point to (which must
/// outlive the infos' use).
fn infos(directives: &[Directive]) -> (Vec<Info>, Vec<CString>) {
    let mut strings = Vec::new();
    let infos = directives
        .iter()
        .map(|d| match d {
            Directive::Flag(key, on) => Info::flag(key, *on),
            Directive::Text(key, value) => {
                let c_value = CString::new(value.replace('\0', " ")).unwrap_or_default();
                // The CString's heap buffer does not move when the CString
                // itself is moved into `strings`.
                let info = Info::text(key, &c_value);
                strings.push(c_value);
                info
            }
        })
        .collect();
    (infos, strings)
}

/// A value the library returned, copied out of its memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Got {
    Text(String),
    Number(u64),
    Flag(bool),
    Texts(Vec<String>),
    Procs(Vec<(String, u32)>),
    /// A type not read here (its `pmix_data_type_t`).
    Other(u16),
}

impl Got {
    pub fn number(&self) -> Option<u64> {
        match self {
            Got::Number(n) => Some(*n),
            Got::Text(t) => t.trim().parse().ok(),
            _ => None,
        }
    }
}

/// A PMIx status other than success.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status(pub c_int);

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = api()
            .ok()
            .map(|api| {
                // SAFETY: PMIx_Error_string returns a pointer to a static
                // string (never freed) or NULL.
                let p = unsafe { (api.error_string)(self.0) };
                if p.is_null() {
                    String::new()
                } else {
                    // SAFETY: non-null, NUL-terminated, static (see above).
                    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
                }
            })
            .unwrap_or_default();
        write!(f, "{} ({})", text, self.0)
    }
}

fn check(rc: c_int) -> Result<(), Status> {
    if rc == PMIX_SUCCESS {
        Ok(())
    } else {
        Err(Status(rc))
    }
}

type InitFn = unsafe extern "C" fn(*mut Proc, *mut Info, usize) -> c_int;
type FinalizeFn = unsafe extern "C" fn(*const Info, usize) -> c_int;
type GetFn =
    unsafe extern "C" fn(*const Proc, *const c_char, *const Info, usize, *mut *mut Value) -> c_int;
type PutFn = unsafe extern "C" fn(u8, *const c_char, *mut Value) -> c_int;
type CommitFn = unsafe extern "C" fn() -> c_int;
type FenceFn = unsafe extern "C" fn(*const Proc, usize, *const Info, usize) -> c_int;
type AbortFn = unsafe extern "C" fn(c_int, *const c_char, *mut Proc, usize) -> c_int;
type PublishFn = unsafe extern "C" fn(*const Info, usize) -> c_int;
type LookupFn = unsafe extern "C" fn(*mut PData, usize, *const Info, usize) -> c_int;
type UnpublishFn = unsafe extern "C" fn(*mut *mut c_char, *const Info, usize) -> c_int;
type ErrorStringFn = unsafe extern "C" fn(c_int) -> *const c_char;
type ValueDestructFn = unsafe extern "C" fn(*mut Value);

/// The entry points used, resolved once.
struct Api {
    init: InitFn,
    finalize: FinalizeFn,
    get: GetFn,
    put: PutFn,
    commit: CommitFn,
    fence: FenceFn,
    abort: AbortFn,
    publish: PublishFn,
    lookup: LookupFn,
    unpublish: UnpublishFn,
    error_string: ErrorStringFn,
    value_destruct: ValueDestructFn,
}

/// The library loaded: `OXMPI_PMIX_LIBRARY` if set, else `libpmix.so.2`
/// from the loader's path. `Err` says why it cannot be used.
static API: OnceLock<Result<Api, String>> = OnceLock::new();

/// The library loaded when `OXMPI_PMIX_LIBRARY` names none.
pub const DEFAULT_LIBRARY: &str = "libpmix.so.2";

/// The library's name to load.
fn library_name() -> String {
    crate::config::get()
        .pmix_library
        .clone()
        .unwrap_or_else(|| DEFAULT_LIBRARY.to_string())
}

fn api() -> Result<&'static Api, String> {
    API.get_or_init(load).as_ref().map_err(Clone::clone)
}

/// Whether the library is loaded or can be (loads it).
pub fn available() -> Result<(), String> {
    api().map(|_| ())
}

fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated message valid until
    // the next dl call on this thread; it is copied at once.
    let p = unsafe { libc::dlerror() };
    if p.is_null() {
        "unknown dlopen error".to_string()
    } else {
        // SAFETY: as above.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

fn load() -> Result<Api, String> {
    load_from(&library_name())
}

fn load_from(name: &str) -> Result<Api, String> {
    log::debug!("loading the PMIx library {name}");
    let c_name = CString::new(name).map_err(|_| format!("bad library name {name:?}"))?;
    // SAFETY: dlopen with a NUL-terminated name. RTLD_GLOBAL: the
    // library's own plugins (pmix_mca_*.so) resolve its symbols. The handle
    // is never closed: the library stays for the process's life.
    let handle = unsafe { libc::dlopen(c_name.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
    if handle.is_null() {
        return Err(format!("cannot load {name}: {}", dl_error()));
    }
    let symbol = |sym: &str| -> Result<*mut c_void, String> {
        let c_sym = CString::new(sym).expect("symbol names have no NUL");
        // SAFETY: dlsym on the live handle with a NUL-terminated name.
        let p = unsafe { libc::dlsym(handle, c_sym.as_ptr()) };
        if p.is_null() {
            Err(format!("{name} has no {sym}: {}", dl_error()))
        } else {
            Ok(p)
        }
    };
    // SAFETY: each symbol is the PMIx 4 function of that name, whose C
    // prototype (pmix.h) the function type repeats; a data pointer from
    // dlsym and a function pointer have one size on the platforms oxmpi
    // supports.
    unsafe {
        Ok(Api {
            init: std::mem::transmute::<*mut c_void, InitFn>(symbol("PMIx_Init")?),
            finalize: std::mem::transmute::<*mut c_void, FinalizeFn>(symbol("PMIx_Finalize")?),
            get: std::mem::transmute::<*mut c_void, GetFn>(symbol("PMIx_Get")?),
            put: std::mem::transmute::<*mut c_void, PutFn>(symbol("PMIx_Put")?),
            commit: std::mem::transmute::<*mut c_void, CommitFn>(symbol("PMIx_Commit")?),
            fence: std::mem::transmute::<*mut c_void, FenceFn>(symbol("PMIx_Fence")?),
            abort: std::mem::transmute::<*mut c_void, AbortFn>(symbol("PMIx_Abort")?),
            publish: std::mem::transmute::<*mut c_void, PublishFn>(symbol("PMIx_Publish")?),
            lookup: std::mem::transmute::<*mut c_void, LookupFn>(symbol("PMIx_Lookup")?),
            unpublish: std::mem::transmute::<*mut c_void, UnpublishFn>(symbol("PMIx_Unpublish")?),
            error_string: std::mem::transmute::<*mut c_void, ErrorStringFn>(symbol(
                "PMIx_Error_string",
            )?),
            value_destruct: std::mem::transmute::<*mut c_void, ValueDestructFn>(symbol(
                "PMIx_Value_destruct",
            )?),
        })
    }
}

/// The library could not be loaded (the message says why), or a call failed.
#[derive(Debug, Clone)]
pub enum CallError {
    Unavailable(String),
    Failed(Status),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Unavailable(why) => write!(f, "{why}"),
            CallError::Failed(status) => write!(f, "{status}"),
        }
    }
}

impl From<Status> for CallError {
    fn from(s: Status) -> CallError {
        CallError::Failed(s)
    }
}

fn loaded() -> Result<&'static Api, CallError> {
    api().map_err(CallError::Unavailable)
}

/// `PMIx_Init`: connects to the local PMIx server; returns this process.
pub fn init() -> Result<Proc, CallError> {
    let api = loaded()?;
    let mut me = Proc::new("", 0);
    // SAFETY: `me` is a valid pmix_proc_t to fill; no info.
    check(unsafe { (api.init)(&mut me, std::ptr::null_mut(), 0) })?;
    Ok(me)
}

/// `PMIx_Finalize`.
pub fn finalize() -> Result<(), CallError> {
    let api = loaded()?;
    // SAFETY: no info; the library was initialized by `init`.
    check(unsafe { (api.finalize)(std::ptr::null(), 0) })?;
    Ok(())
}

/// `PMIx_Get` of `key` of process `who`; `Ok(None)` when not found.
pub fn get(who: &Proc, key: &str, directives: &[Directive]) -> Result<Option<Got>, CallError> {
    let api = loaded()?;
    let c_key = CString::new(key).map_err(|_| CallError::Failed(Status(ERR_NOT_FOUND)))?;
    let (info, _strings) = infos(directives);
    let mut out: *mut Value = std::ptr::null_mut();
    // SAFETY: valid proc, NUL-terminated key, `info.len()` valid infos (or
    // none), and an out pointer the library sets to a value it allocated.
    let rc = unsafe {
        (api.get)(
            who,
            c_key.as_ptr(),
            if info.is_empty() {
                std::ptr::null()
            } else {
                info.as_ptr()
            },
            info.len(),
            &mut out,
        )
    };
    if rc == ERR_NOT_FOUND {
        return Ok(None);
    }
    check(rc)?;
    if out.is_null() {
        return Ok(None);
    }
    // SAFETY: on success `out` points to a value the library allocated
    // with malloc; it is copied, then destructed and freed exactly once
    // (PMIX_VALUE_RELEASE).
    let got = unsafe {
        let got = copy_value(&*out);
        (api.value_destruct)(out);
        libc::free(out.cast());
        got
    };
    Ok(Some(got))
}

/// A NUL-terminated C string as a Rust string (empty for NULL).
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string.
unsafe fn text(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: the caller's contract.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// Copies a value out of the library's memory.
///
/// # Safety
/// `v` is a value the library filled: its union member is the one its
/// type names, and its pointers are valid.
unsafe fn copy_value(v: &Value) -> Got {
    // SAFETY: every union member read is the one `kind` names; pointers
    // are the library's and valid (the function's contract).
    unsafe {
        match v.kind {
            TYPE_BOOL => Got::Flag(v.data.flag),
            TYPE_STRING => Got::Text(text(v.data.string)),
            TYPE_SIZE => Got::Number(v.data.size as u64),
            TYPE_INT => Got::Number(v.data.integer.max(0) as u64),
            TYPE_INT32 => Got::Number(v.data.int32.max(0) as u64),
            TYPE_UINT16 => Got::Number(v.data.uint16 as u64),
            TYPE_UINT32 | TYPE_PROC_RANK => Got::Number(v.data.uint32 as u64),
            TYPE_UINT64 => Got::Number(v.data.uint64),
            TYPE_PROC if !v.data.proc_.is_null() => {
                let p = &*v.data.proc_;
                Got::Procs(vec![(p.nspace(), p.rank)])
            }
            TYPE_DATA_ARRAY if !v.data.darray.is_null() => {
                let a = &*v.data.darray;
                match a.kind {
                    _ if a.array.is_null() => Got::Texts(Vec::new()),
                    TYPE_STRING => {
                        let items =
                            std::slice::from_raw_parts(a.array as *const *mut c_char, a.size);
                        Got::Texts(items.iter().map(|&p| text(p)).collect())
                    }
                    TYPE_PROC => {
                        let items = std::slice::from_raw_parts(a.array as *const Proc, a.size);
                        Got::Procs(items.iter().map(|p| (p.nspace(), p.rank)).collect())
                    }
                    other => Got::Other(other),
                }
            }
            other => Got::Other(other),
        }
    }
}

/// `PMIx_Put` of a string with global scope (seen by the job once
/// committed).
pub fn put_text(key: &str, value: &str) -> Result<(), CallError> {
    let api = loaded()?;
    let bad = || CallError::Failed(Status(ERR_NOT_FOUND));
    let c_key = CString::new(key).map_err(|_| bad())?;
    let c_value = CString::new(value).map_err(|_| bad())?;
    let mut v = Value {
        kind: TYPE_STRING,
        data: ValueData { _room: [0; 3] },
    };
    v.data.string = c_value.as_ptr().cast_mut();
    // SAFETY: NUL-terminated key; a string value pointing to `c_value`,
    // alive for the call; PMIx_Put copies the value.
    check(unsafe { (api.put)(SCOPE_GLOBAL, c_key.as_ptr(), &mut v) })?;
    Ok(())
}

/// `PMIx_Commit`: makes the puts so far available to other processes.
pub fn commit() -> Result<(), CallError> {
    let api = loaded()?;
    // SAFETY: no arguments.
    check(unsafe { (api.commit)() })?;
    Ok(())
}

/// `PMIx_Fence` over every process of namespace `nspace`.
pub fn fence(nspace: &str, directives: &[Directive]) -> Result<(), CallError> {
    let api = loaded()?;
    let all = Proc::new(nspace, RANK_WILDCARD);
    let (info, _strings) = infos(directives);
    // SAFETY: one valid proc; `info.len()` valid infos.
    check(unsafe { (api.fence)(&all, 1, info.as_ptr(), info.len()) })?;
    Ok(())
}

/// `PMIx_Abort` of the whole job (no procs: the caller's namespace).
pub fn abort(code: i32, message: &str) -> Result<(), CallError> {
    let api = loaded()?;
    let c_msg = CString::new(message.replace('\0', " ")).unwrap_or_default();
    // SAFETY: NUL-terminated message; no procs means the whole job.
    check(unsafe { (api.abort)(code, c_msg.as_ptr(), std::ptr::null_mut(), 0) })?;
    Ok(())
}

/// A key the name service calls can pass whole (`PMIX_ERR_BAD_PARAM`
/// for one with a NUL or too long for a PMIx key).
fn service_key(key: &str) -> Result<CString, CallError> {
    if key.len() >= KEY_LEN {
        return Err(CallError::Failed(Status(ERR_BAD_PARAM)));
    }
    CString::new(key).map_err(|_| CallError::Failed(Status(ERR_BAD_PARAM)))
}

/// `PMIx_Publish` of `key` with a string value (the server's default
/// range and persistence).
pub fn publish(key: &str, value: &str) -> Result<(), CallError> {
    let api = loaded()?;
    service_key(key)?;
    let c_value = CString::new(value).map_err(|_| CallError::Failed(Status(ERR_BAD_PARAM)))?;
    let info = Info::text(key, &c_value);
    // SAFETY: one valid info whose string (`c_value`) lives for the call.
    check(unsafe { (api.publish)(&info, 1) })?;
    Ok(())
}

/// `PMIx_Lookup` of `key` without waiting: its string value, `Ok(None)`
/// when nothing is published under it.
pub fn lookup(key: &str) -> Result<Option<String>, CallError> {
    let api = loaded()?;
    service_key(key)?;
    let mut pd = PData {
        proc_: Proc::new("", 0),
        key: [0; KEY_LEN],
        value: Value {
            kind: 0,
            data: ValueData { _room: [0; 3] },
        },
    };
    set_key(&mut pd.key, key);
    // SAFETY: one valid pdata to fill (its value empty, type 0); no info.
    let rc = unsafe { (api.lookup)(&mut pd, 1, std::ptr::null(), 0) };
    if rc == ERR_NOT_FOUND {
        return Ok(None);
    }
    check(rc)?;
    // SAFETY: on success the library filled `pd.value` (its type names the
    // union member); it is copied, then its contents destructed once
    // (PMIX_PDATA_DESTRUCT; `pd` itself is ours).
    let got = unsafe {
        let got = copy_value(&pd.value);
        (api.value_destruct)(&mut pd.value);
        got
    };
    Ok(match got {
        Got::Text(t) => Some(t),
        _ => None,
    })
}

/// `PMIx_Unpublish` of `key`.
pub fn unpublish(key: &str) -> Result<(), CallError> {
    let api = loaded()?;
    let c_key = service_key(key)?;
    let mut keys = [c_key.as_ptr().cast_mut(), std::ptr::null_mut()];
    // SAFETY: a NULL-terminated array of one NUL-terminated key, alive for
    // the call; no info.
    check(unsafe { (api.unpublish)(keys.as_mut_ptr(), std::ptr::null(), 0) })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// The header's sizes and offsets, from a C program built against it;
    /// `None` (with a notice) when no compiler or header is installed.
    fn header_layout() -> Option<String> {
        let include = "/usr/lib/x86_64-linux-gnu/pmix2/include";
        if !std::path::Path::new(include).join("pmix_common.h").exists() {
            eprintln!("notice: PMIx headers not installed (libpmix-dev): layout not checked");
            return None;
        }
        let dir = std::env::temp_dir().join(format!("oxmpi-pmix-layout-{}", std::process::id()));
        std::fs::create_dir_all(&dir).ok()?;
        let src = dir.join("layout.c");
        std::fs::write(
            &src,
            r#"#include <pmix_common.h>
#include <stdio.h>
#include <stddef.h>
int main(void) {
    printf("%zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu\n",
           sizeof(pmix_proc_t), offsetof(pmix_proc_t, rank),
           sizeof(pmix_value_t), offsetof(pmix_value_t, data),
           sizeof(pmix_info_t), offsetof(pmix_info_t, flags),
           offsetof(pmix_info_t, value),
           sizeof(pmix_data_array_t), offsetof(pmix_data_array_t, size),
           offsetof(pmix_data_array_t, array),
           sizeof(pmix_pdata_t), offsetof(pmix_pdata_t, key), offsetof(pmix_pdata_t, value));
    return 0;
}
"#,
        )
        .ok()?;
        let exe = dir.join("layout");
        let built = std::process::Command::new("cc")
            .arg(format!("-I{include}"))
            .arg(&src)
            .arg("-o")
            .arg(&exe)
            .status();
        if !built.is_ok_and(|s| s.success()) {
            eprintln!("notice: no C compiler for the PMIx header: layout not checked");
            let _ = std::fs::remove_dir_all(&dir);
            return None;
        }
        let out = std::process::Command::new(&exe).output().ok()?;
        let _ = std::fs::remove_dir_all(&dir);
        Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    #[test]
    fn layout_matches_the_header() {
        let ours = format!(
            "{} {} {} {} {} {} {} {} {} {} {} {} {}",
            size_of::<Proc>(),
            offset_of!(Proc, rank),
            size_of::<Value>(),
            offset_of!(Value, data),
            size_of::<Info>(),
            offset_of!(Info, flags),
            offset_of!(Info, value),
            size_of::<DataArray>(),
            offset_of!(DataArray, size),
            offset_of!(DataArray, array),
            size_of::<PData>(),
            offset_of!(PData, key),
            offset_of!(PData, value),
        );
        // PMIx 4.2 on x86_64, in case the header is not installed.
        assert_eq!(ours, "260 256 32 8 552 512 520 24 8 16 808 260 776");
        if let Some(theirs) = header_layout() {
            assert_eq!(ours, theirs, "ours vs pmix_common.h");
        }
    }

    #[test]
    fn proc_names_round_trip_and_are_cut_to_the_field() {
        assert_eq!(Proc::new("slurm.pmix.12.0", 3).nspace(), "slurm.pmix.12.0");
        let long = "n".repeat(400);
        assert_eq!(Proc::new(&long, 0).nspace().len(), NSPACE_LEN - 1);
    }

    #[test]
    fn directives_carry_their_key_and_value() {
        let (info, _strings) = infos(&[
            Directive::Flag("pmix.collect", true),
            Directive::Text("pmix.pset.nm", "app".into()),
        ]);
        // SAFETY: the members written by `infos`, strings alive.
        unsafe {
            assert_eq!(info[0].value.kind, TYPE_BOOL);
            assert!(info[0].value.data.flag);
            assert_eq!(text(info[0].key.as_ptr()), "pmix.collect");
            assert_eq!(info[1].value.kind, TYPE_STRING);
            assert_eq!(text(info[1].value.data.string), "app");
            assert_eq!(text(info[1].key.as_ptr()), "pmix.pset.nm");
        }
    }

    #[test]
    fn a_missing_library_is_a_clear_error() {
        // `load_from` itself, not the process-wide `API`.
        let err = load_from("/nonexistent/libpmix.so.2")
            .err()
            .expect("no such library");
        assert!(
            err.contains("cannot load /nonexistent/libpmix.so.2"),
            "{err}"
        );
    }
}
