#pragma once
// The few oneDNN calls whose spelling changed between oneDNN 2.x (Debian 12's libdnnl 2.6)
// and 3.x (Debian 13's libdnnl 3.7), chosen at compile time from the version oneDNN declares
// (DNNL_VERSION_MAJOR, oneapi/dnnl/dnnl_version.h, which dnnl.hpp includes). Both build the same
// primitives from the same descriptions:
// - 3.x removed the operation descriptors (convolution_forward::desc, pooling_forward::desc,
//   matmul::desc): a primitive descriptor is made from the engine and the description directly,
//   and a pooling takes its dilation (0: none, what 2.x's pooling_forward meant).
// - 3.x's post_ops::append_eltwise lost its scale (2.x's was always 1 here).
// - 3.x removed output scales: a matmul's result times a scale is the source's scale
//   (dst = src_scale * (src x weights)), passed at run time as a one-value memory.
// Only the oneDNN plans (conv_plan.cpp, dnnl_matmul.cpp) include this; never a header of theirs.
#include <dnnl.hpp>

#include <unordered_map>

#ifndef DNNL_VERSION_MAJOR
#error "dnnl.hpp did not declare DNNL_VERSION_MAJOR"
#endif

namespace foveal::core::dnnl_compat {

using dnnl::memory;

inline dnnl::convolution_forward::primitive_desc convolutionInference(
    const dnnl::engine& engine, dnnl::algorithm alg, const memory::desc& src,
    const memory::desc& weights, const memory::desc& bias, const memory::desc& dst,
    const memory::dims& strides, const memory::dims& padL, const memory::dims& padR,
    const dnnl::primitive_attr& attr) {
#if DNNL_VERSION_MAJOR >= 3
  return dnnl::convolution_forward::primitive_desc(engine, dnnl::prop_kind::forward_inference, alg,
                                                   src, weights, bias, dst, strides, padL, padR,
                                                   attr);
#else
  dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, alg, src, weights, bias,
                                    dst, strides, padL, padR);
  return dnnl::convolution_forward::primitive_desc(d, attr, engine);
#endif
}

inline dnnl::pooling_forward::primitive_desc maxPoolInference(
    const dnnl::engine& engine, const memory::desc& src, const memory::desc& dst,
    const memory::dims& strides, const memory::dims& kernel, const memory::dims& padL,
    const memory::dims& padR, const dnnl::primitive_attr& attr) {
#if DNNL_VERSION_MAJOR >= 3
  const memory::dims noDilation(strides.size(), 0);
  return dnnl::pooling_forward::primitive_desc(engine, dnnl::prop_kind::forward_inference,
                                               dnnl::algorithm::pooling_max, src, dst, strides,
                                               kernel, noDilation, padL, padR, attr);
#else
  dnnl::pooling_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::pooling_max,
                                src, dst, strides, kernel, padL, padR);
  return dnnl::pooling_forward::primitive_desc(d, attr, engine);
#endif
}

inline void appendEltwise(dnnl::post_ops& ops, dnnl::algorithm alg, float alpha, float beta) {
#if DNNL_VERSION_MAJOR >= 3
  ops.append_eltwise(alg, alpha, beta);
#else
  ops.append_eltwise(1.0f, alg, alpha, beta);
#endif
}

/// `bias`: a zero (empty) desc for none.
inline dnnl::matmul::primitive_desc matmul(const dnnl::engine& engine, const memory::desc& src,
                                           const memory::desc& weights, const memory::desc& bias,
                                           const memory::desc& dst,
                                           const dnnl::primitive_attr& attr) {
#if DNNL_VERSION_MAJOR >= 3
  if (bias.get_size() == 0) return dnnl::matmul::primitive_desc(engine, src, weights, dst, attr);
  return dnnl::matmul::primitive_desc(engine, src, weights, bias, dst, attr);
#else
  if (bias.get_size() == 0)
    return dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, weights, dst), attr, engine);
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, weights, bias, dst), attr, engine);
#endif
}

/// The result of the primitive `attr` describes times `*scale` (one value for the whole
/// result); `args`: the primitive's arguments, to which 3.x's scale memory is added. `scale` must
/// outlive the primitive's execution (3.x reads it at run time).
inline void scaleResult(dnnl::primitive_attr& attr, std::unordered_map<int, memory>& args,
                        const dnnl::engine& engine, const float* scale) {
#if DNNL_VERSION_MAJOR >= 3
  attr.set_scales_mask(DNNL_ARG_SRC, 0);
  args.emplace(DNNL_ARG_ATTR_SCALES | DNNL_ARG_SRC,
               memory(memory::desc({1}, memory::data_type::f32, memory::format_tag::x), engine,
                      const_cast<float*>(scale)));
#else
  (void)args;
  (void)engine;
  attr.set_output_scales(0, {*scale});
#endif
}

}  // namespace foveal::core::dnnl_compat
