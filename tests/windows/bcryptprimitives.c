/* A stand-in for bcryptprimitives.dll, built by tests/windows/run.sh into the wine prefix only.
 *
 * Rust >= 1.78 std imports bcryptprimitives.dll!ProcessPrng (its random source on Windows 10+),
 * which wine 8 does not provide: every Rust binary for x86_64-pc-windows-gnu, the test programs
 * and the _core.pyd extension, fails to load without it. ProcessPrng fills the buffer from the
 * system RNG and, like the real one, always succeeds for valid arguments. */
#include <windows.h>
#include <bcrypt.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len) {
        ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (BCryptGenRandom(NULL, data, n, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0) return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
