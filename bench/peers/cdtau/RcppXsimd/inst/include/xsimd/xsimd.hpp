/* Stand-in for the xsimd 7 that CRAN's RcppXsimd bundles (Debian has only
 * xsimd 8, libxsimd-dev, and no r-cran-rcppxsimd). Includes the system's
 * xsimd 8 and maps the two xsimd 7 names cdtau's src/utils_simd.h uses:
 *   xsimd::batch<T, N>  (N lanes)  -> xsimd 8's batch<T> of the default arch
 *   xsimd::set_simd(x)             -> a batch with every lane x
 * Everything else it calls (load_aligned, fma, fms, select, exp, log, abs,
 * max, clip, hadd) has the same name and meaning in xsimd 8. The macro
 * renames `batch` only in the code compiled after this header. */
#ifndef PEERS_XSIMD7_COMPAT_HPP
#define PEERS_XSIMD7_COMPAT_HPP

#include_next <xsimd/xsimd.hpp>

namespace xsimd
{
template <class T, std::size_t N>
using batch7_compat = batch<T>;

template <class T>
inline batch<T> set_simd(T x) noexcept
{
    static_assert(simd_type<T>::size > 1, "no SIMD type for T");
    return batch<T>(x);
}
} // namespace xsimd

#define batch batch7_compat

#endif
