# gnuplot script for bench/run.sh: reads the .dat files the workload programs
# wrote into `dir` and writes two PNGs there.
#
#   gnuplot -e "dir='build/bench/results'" bench/plots.gp
#
#   throughput.png   W1 and W2: median million tasks/s per contender, with
#                    the min-max range of the repetitions; crew in blue
#   lateness.png     W4: distribution (CDF) of timer lateness per contender

if (!exists("dir")) dir = "build/bench/results"

set terminal pngcairo size 820,900 font "DejaVu Sans,9" noenhanced
set datafile separator whitespace

# ---- throughput -------------------------------------------------------------
set output dir."/throughput.png"
set multiplot layout 2,1 title "Throughput: no-op tasks into a pool of 2 workers (median of the repetitions, min-max)"
set style fill solid 0.7 border -1
set xlabel "million tasks/s"
set grid xtics
set key off
set ytics nomirror
set yrange [:] reverse
set offsets 0, 0, 0.5, 0.5
do for [w in "W1 W2"] {
    set title w.(w eq "W1" ? ": 1 producer" : ": 2 producers")
    f = dir."/".w.".dat"
    plot f index 0 using ($2/2):0:($2/2):(0.35):($5 == 1 ? 0x3060c0 : 0x909090):ytic(1) \
             with boxxyerror lc rgb variable, \
         f index 0 using 2:0:3:4 with xerrorbars lc rgb "black" pt 0
}
unset multiplot

# ---- timer lateness ---------------------------------------------------------
# Only when W4 ran (run.sh --only W1,W2 has no lateness data, and an empty
# plot is an error that failed the whole run).
files = system("ls ".dir."/W4_lateness_*.dat 2>/dev/null")
if (strlen(files) == 0) exit
set output dir."/lateness.png"
reset
set terminal pngcairo size 900,520 font "DejaVu Sans,9" noenhanced
set title "W4: timer lateness (start - due), delays uniform in [0, 2 s], 2 threads; first repetition"
set xlabel "lateness, us (log scale)"
set ylabel "fraction of tasks started within"
set logscale x
set grid
set key bottom right
set yrange [0:1]
label(f) = substr(f, strstrt(f, "W4_lateness_") + 12, strlen(f) - 4)
plot for [f in files] f using ($1 > 0.1 ? $1 : 0.1):2 with lines lw 2 title label(f)
