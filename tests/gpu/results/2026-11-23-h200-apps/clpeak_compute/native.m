Global memory bandwidth (GBPS) / float	4139.33
Global memory bandwidth (GBPS) / float2	4200.21
Global memory bandwidth (GBPS) / float4	4253.96
Global memory bandwidth (GBPS) / float8	4324.37
Global memory bandwidth (GBPS) / float16	4382.08
Single-precision compute (GFLOPS) / float	64474.82
Single-precision compute (GFLOPS) / float2	64368.92
Single-precision compute (GFLOPS) / float4	64212.90
Single-precision compute (GFLOPS) / float8	63790.47
Single-precision compute (GFLOPS) / float16	63485.21
Double-precision compute (GFLOPS) / double	32868.12
Double-precision compute (GFLOPS) / double2	32866.60
Double-precision compute (GFLOPS) / double4	32774.39
Double-precision compute (GFLOPS) / double8	32583.51
Double-precision compute (GFLOPS) / double16	32342.61
Integer compute (GIOPS) / int	33101.22
Integer compute (GIOPS) / int2	33155.17
Integer compute (GIOPS) / int4	33106.89
Integer compute (GIOPS) / int8	33212.66
Integer compute (GIOPS) / int16	33216.81
Integer compute Fast 24bit (GIOPS) / int	33073.42
Integer compute Fast 24bit (GIOPS) / int2	33162.15
Integer compute Fast 24bit (GIOPS) / int4	33098.13
Integer compute Fast 24bit (GIOPS) / int8	32968.53
Integer compute Fast 24bit (GIOPS) / int16	32706.57
Kernel launch latency	6.88
