//! User operations (`MPI_Op_create`, `MPI_Op_create_c`) and how they are
//! called. MPI hands a user function buffers in the user's own layout, so
//! to combine packed data oxmpi unpacks both operands into aligned scratch
//! memory laid out as `count` elements of the datatype, calls the function
//! (in pieces of at most `INT_MAX` elements for the `int` form), and packs
//! the result back.
use std::os::raw::{c_int, c_void};

use crate::core::datatype::Datatype;
use crate::mpi_abi::types::{MPI_Count, MPI_Datatype};

/// `MPI_User_function`: `(invec, inoutvec, len, datatype)`.
pub type IntFunction =
    unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut MPI_Datatype);
/// `MPI_User_function_c`: the large-count form.
pub type CountFunction =
    unsafe extern "C" fn(*mut c_void, *mut c_void, *mut MPI_Count, *mut MPI_Datatype);

#[derive(Clone, Copy, Debug)]
pub enum UserFunction {
    Int(IntFunction),
    Count(CountFunction),
}

#[derive(Debug)]
pub struct UserOp {
    pub function: UserFunction,
    pub commutative: bool,
}

impl UserOp {
    /// Calls the function on `count` elements at `input` and `inout`, in
    /// pieces its length argument can express.
    ///
    /// # Safety
    /// `input` and `inout` must each hold `count` elements of `datatype`
    /// (the type `handle` names), in its layout, and not overlap.
    pub unsafe fn call(
        &self,
        input: *mut u8,
        inout: *mut u8,
        count: usize,
        datatype: &Datatype,
        handle: MPI_Datatype,
    ) {
        let piece_max = match self.function {
            UserFunction::Int(_) => c_int::MAX as usize,
            UserFunction::Count(_) => MPI_Count::MAX as usize,
        };
        let mut done = 0;
        while done < count {
            let n = (count - done).min(piece_max);
            let shift = done as isize * datatype.extent();
            let a = input.wrapping_offset(shift).cast::<c_void>();
            let b = inout.wrapping_offset(shift).cast::<c_void>();
            #[cfg(not(feature = "standard-abi"))]
            let mut dt = handle;
            #[cfg(not(feature = "standard-abi"))]
            let dt_ptr: *mut MPI_Datatype = &mut dt;
            // The standard ABI's user function gets a pointer to the
            // standard (pointer-sized) datatype handle; its type differs
            // from oxmpi's only there, so the pointer is cast.
            #[cfg(feature = "standard-abi")]
            let mut std_dt = crate::mpi_abi::standard::convert::datatype_out(handle);
            #[cfg(feature = "standard-abi")]
            let dt_ptr: *mut MPI_Datatype =
                (&mut std_dt as *mut crate::mpi_abi::standard::types::MPI_Datatype).cast();
            // SAFETY: the function is the user's MPI_User_function, called as
            // MPI specifies, on `n` elements of the buffers (caller's
            // contract); the length and datatype are locals.
            unsafe {
                match self.function {
                    UserFunction::Int(f) => {
                        let mut len = n as c_int;
                        f(a, b, &mut len, dt_ptr)
                    }
                    UserFunction::Count(f) => {
                        let mut len = n as MPI_Count;
                        f(a, b, &mut len, dt_ptr)
                    }
                }
            }
            done += n;
        }
    }

    /// Combines packed data: `inout = input op inout` over whole elements
    /// of `datatype`, through scratch memory in the datatype's layout.
    pub fn combine_packed(
        &self,
        datatype: &Datatype,
        handle: MPI_Datatype,
        input: &[u8],
        inout: &mut [u8],
    ) {
        let size = datatype.size();
        if size == 0 || input.is_empty() {
            return;
        }
        let count = input.len() / size;
        let mut a = Scratch::new(datatype, count);
        let mut b = Scratch::new(datatype, count);
        // SAFETY: each scratch area spans the data of `count` elements at
        // its origin (`Scratch::new`); the packed slices hold `count`
        // elements; the two areas are distinct allocations.
        unsafe {
            datatype.unpack_range(a.origin(), count, 0, input);
            datatype.unpack_range(b.origin(), count, 0, inout);
            self.call(a.origin(), b.origin(), count, datatype, handle);
            datatype.pack_range(b.origin(), count, 0, inout);
        }
    }
}

/// Zeroed memory, 16-byte aligned, laid out for `count` elements of a
/// datatype: element data at `origin() + displacement` stays inside it.
struct Scratch {
    storage: Vec<u128>,
    origin: usize,
}

impl Scratch {
    fn new(datatype: &Datatype, count: usize) -> Scratch {
        let (lo, hi) = datatype.data_span(count);
        // The origin is 16-byte aligned, so elements are as aligned as in
        // a user's buffer.
        let origin = if lo < 0 {
            (lo.unsigned_abs()).next_multiple_of(16)
        } else {
            0
        };
        let bytes = origin + hi.max(0) as usize;
        Scratch {
            storage: vec![0u128; bytes.div_ceil(16).max(1)],
            origin,
        }
    }

    fn origin(&mut self) -> *mut u8 {
        self.storage
            .as_mut_ptr()
            .cast::<u8>()
            .wrapping_add(self.origin)
    }
}
