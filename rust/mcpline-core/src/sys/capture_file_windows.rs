//! The capture file on Windows: a temporary file shared for an append-only open of its own,
//! which fds 1 and 2 hold (so that reading the file never moves where they write), and the
//! identity checks the cell parks by.
#![allow(unsafe_code)]

use std::ffi::c_int;
use std::fs::File;
use std::io;
use std::marker::PhantomData;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};

use windows_sys::Win32::Foundation::{HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Ioctl::FSCTL_SET_SPARSE;

use super::windows::Session;

/// A temporary file for a capture, deleted by the system when its last handle closes. Unlike
/// `tempfile::tempfile` (an exclusive open), it is shared for reading, writing and deleting, so
/// that fds 1 and 2 can get an append-only open of it ([`file_fd`]).
pub(crate) fn temp_file() -> io::Result<File> {
    use std::os::windows::fs::OpenOptionsExt as _;
    use windows_sys::Win32::Storage::FileSystem::{
        FILE_ATTRIBUTE_TEMPORARY, FILE_FLAG_DELETE_ON_CLOSE, FILE_SHARE_DELETE, FILE_SHARE_READ,
        FILE_SHARE_WRITE,
    };
    let named = tempfile::Builder::new()
        .prefix("mcpline-capture-")
        .make(|path| {
            File::options()
                .read(true)
                .write(true)
                .create_new(true)
                .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE)
                .custom_flags(FILE_FLAG_DELETE_ON_CLOSE)
                .attributes(FILE_ATTRIBUTE_TEMPORARY)
                .open(path)
        })?;
    let (file, mut path) = named.into_parts();
    // Not deleted by name when `path` drops: a file pending deletion refuses new opens, the
    // append-only one included. (`TempPath::keep` would also reset its attributes, dropping
    // the temporary hint.) The system deletes it when its last handle closes.
    path.disable_cleanup(true);
    // Sparse, so that the room of what the capture cap moved to the log can be given back
    // ([`release_front`]). A file system without sparse files keeps it all, as before.
    let _ = control(&file, FSCTL_SET_SPARSE, None);
    Ok(file)
}

/// `DeviceIoControl` on `file` with an optional `FILE_ZERO_DATA_INFORMATION` as input.
fn control(
    file: &File,
    code: u32,
    zero: Option<&windows_sys::Win32::System::Ioctl::FILE_ZERO_DATA_INFORMATION>,
) -> io::Result<()> {
    use windows_sys::Win32::System::IO::DeviceIoControl;
    let (input, size) = zero.map_or((std::ptr::null(), 0), |zero| {
        (
            std::ptr::from_ref(zero).cast(),
            u32::try_from(std::mem::size_of_val(zero)).unwrap_or(0),
        )
    });
    let mut returned = 0u32;
    // SAFETY: a synchronous control call on a handle `file` keeps open for the call; the input
    // is `size` bytes of a live struct (or none) and no output buffer is given.
    let done = unsafe {
        DeviceIoControl(
            file.as_raw_handle(),
            code,
            input,
            size,
            std::ptr::null_mut(),
            0,
            &raw mut returned,
            std::ptr::null_mut(),
        )
    };
    if done == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Windows captures into a temporary file (see the unix half).
pub(crate) const fn anonymous_file() -> Option<File> {
    None
}

/// A new open of `file`: a file object of its own (so a position of its own) that may only
/// append, and read the attributes the parking check compares. Writes through it land at the
/// end of the file, whichever handle of the file was last read or sought.
fn append_only(file: &File) -> io::Result<OwnedHandle> {
    use windows_sys::Win32::Storage::FileSystem::{
        FILE_APPEND_DATA, FILE_READ_ATTRIBUTES, FILE_SHARE_DELETE, FILE_SHARE_READ,
        FILE_SHARE_WRITE, ReOpenFile, SYNCHRONIZE,
    };
    // SAFETY: ReOpenFile opens the file behind a handle `file` keeps open during the call and
    // returns a new, non-inheritable handle that only we own (or INVALID_HANDLE_VALUE).
    let handle = unsafe {
        ReOpenFile(
            file.as_raw_handle(),
            FILE_APPEND_DATA | FILE_READ_ATTRIBUTES | SYNCHRONIZE,
            FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
            0,
        )
    };
    if handle == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `handle` is a fresh handle that only we own.
    Ok(unsafe { OwnedHandle::from_raw_handle(handle) })
}

/// The CRT's `_O_APPEND`: every `_write` first moves to the end of the file.
const O_APPEND: c_int = 0x0008;

/// A CRT descriptor of the capture file, to `_dup2` onto fds 1 and 2; closed when dropped.
pub(crate) struct FileFd<'a> {
    fd: c_int,
    _file: PhantomData<&'a File>,
}

impl Drop for FileFd<'_> {
    fn drop(&mut self) {
        if let Ok(session) = Session::open() {
            session.close(self.fd);
        }
    }
}

/// A CRT descriptor for the capture file, to point fds 1 and 2 at: an append-only open of its
/// own ([`append_only`]), so that reading the file (the capture cap's watcher, late output)
/// never moves the position the tool and its children write at.
pub(crate) fn file_fd(file: &File) -> io::Result<FileFd<'_>> {
    let session = Session::open()?;
    let handle = append_only(file)?;
    let fd = session.adopt_with(handle, O_APPEND)?;
    Ok(FileFd {
        fd,
        _file: PhantomData,
    })
}

/// Points standard descriptor `fd` at the capture file (`_dup2` makes an inheritable copy).
pub(crate) fn redirect(fd: c_int, file: &FileFd<'_>) -> io::Result<()> {
    Session::open()?.dup2(file.fd, fd)
}

/// Nothing to do: fds 1 and 2 get an append-only open of the file of their own ([`file_fd`]),
/// so every write through them already lands at its end.
#[allow(clippy::unnecessary_wraps, reason = "same signature as the unix half")]
pub(crate) fn set_append(_file: &File) -> io::Result<()> {
    Ok(())
}

/// A `File` holds an OS handle, not a CRT descriptor: it can never sit on fds 0-2.
#[allow(clippy::unnecessary_wraps, reason = "same signature as the unix half")]
pub(crate) fn off_standard_fds(file: File) -> io::Result<File> {
    Ok(file)
}

/// Gives back the room of bytes `..end` of `file` (they read as zeros afterwards; the size and
/// the offsets of later bytes stay): `FSCTL_SET_ZERO_DATA` on the sparse file, which NTFS
/// deallocates in whole allocation units. Refused by file systems without sparse files (and by
/// wine), and the drained bytes then keep their room.
pub(crate) fn release_front(file: &File, end: u64) -> io::Result<()> {
    use windows_sys::Win32::System::Ioctl::{FILE_ZERO_DATA_INFORMATION, FSCTL_SET_ZERO_DATA};
    let zero = FILE_ZERO_DATA_INFORMATION {
        FileOffset: 0,
        BeyondFinalZero: i64::try_from(end)
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?,
    };
    control(file, FSCTL_SET_ZERO_DATA, Some(&zero))
}

/// What an open file is (volume serial number and file index), to tell whether two handles reach
/// the same one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileId {
    volume: u32,
    index: u64,
}

/// The identity of the file behind `handle`, and its size.
fn handle_id(handle: HANDLE) -> Option<(FileId, u64)> {
    use windows_sys::Win32::Storage::FileSystem::{
        BY_HANDLE_FILE_INFORMATION, GetFileInformationByHandle,
    };
    let mut info = std::mem::MaybeUninit::<BY_HANDLE_FILE_INFORMATION>::uninit();
    // SAFETY: writes one BY_HANDLE_FILE_INFORMATION into `info`, a live local of that type;
    // `handle` is kept open by its owner for the call. Failure (a pipe, a console) writes nothing.
    if unsafe { GetFileInformationByHandle(handle, info.as_mut_ptr()) } == 0 {
        return None;
    }
    // SAFETY: the call succeeded, so it initialised the whole struct.
    let info = unsafe { info.assume_init() };
    let id = FileId {
        volume: info.dwVolumeSerialNumber,
        index: (u64::from(info.nFileIndexHigh) << 32) | u64::from(info.nFileIndexLow),
    };
    Some((
        id,
        (u64::from(info.nFileSizeHigh) << 32) | u64::from(info.nFileSizeLow),
    ))
}

/// The identity of `file`.
pub(crate) fn file_id(file: &File) -> io::Result<FileId> {
    handle_id(file.as_raw_handle())
        .map(|(id, _)| id)
        .ok_or_else(io::Error::last_os_error)
}

/// The identity of the file behind descriptor `fd` and its size, or `None` if `fd` is closed or
/// is not a file.
pub(crate) fn fd_file(fd: c_int) -> Option<(FileId, u64)> {
    let session = Session::open().ok()?;
    handle_id(session.os_handle(fd)?)
}
