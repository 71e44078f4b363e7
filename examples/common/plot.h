/* A small line plotter for the examples: panels with axes, ticks, optional
 * log scales, several series with markers and min-max bands or error bars, a
 * legend, and text in a built-in 5x7 ASCII font, drawn into an RGB canvas that
 * is then written as a PNG (png.h). Not a plotting library: just enough to
 * show an example's figures without extra tools. Nothing here prints or exits.
 */
#ifndef EXAMPLES_COMMON_PLOT_H
#define EXAMPLES_COMMON_PLOT_H

#include <stdint.h>

/** width x height RGB pixels, row stride 3 * width. */
typedef struct plot_canvas {
    int width, height;
    uint8_t *rgb;
} plot_canvas;

enum plot_spread { PLOT_BAND = 0, PLOT_BARS = 1 };
enum plot_legend { PLOT_TOP_LEFT = 0, PLOT_TOP_RIGHT = 1, PLOT_BOTTOM_RIGHT = 2,
                   PLOT_BOTTOM_LEFT = 3 };

/** One series: points joined by a line, each with a marker. Series i takes
 *  colour and marker shape i of a fixed palette (plot_draw_styled: those of
 *  its style). Points with a non-finite coordinate (or one <= 0 on a log
 *  axis) are skipped. */
typedef struct plot_series {
    const char *label;
    int n;
    const double *x, *y;
    const double *lo, *hi; /* NULL, or [n] the spread around y (e.g. min and max) */
    int spread;            /* PLOT_BAND (shaded between lo and hi) or PLOT_BARS */
    const uint8_t *open;   /* NULL, or [n]: nonzero draws a hollow marker (e.g. a lower bound) */
} plot_series;

/** How plot_draw_styled draws a series. */
typedef struct plot_style {
    int colour; /* >= 0: the palette's colour and marker shape of this index */
    int dashed; /* nonzero: a dashed line and hollow markers */
} plot_style;

typedef struct plot_axes {
    const char *title, *xlabel, *ylabel; /* each may be NULL */
    int log_x, log_y;
    double xmin, xmax, ymin, ymax; /* a range with min >= max is fitted to the data */
    const double *xticks;          /* NULL, or [n_xticks] labelled x ticks to use */
    int n_xticks;
    int legend;                    /* enum plot_legend */
    const plot_series *series;
    int n_series;
} plot_axes;

/** A white canvas. @return 0, or -1 (bad size or out of memory; c->rgb NULL) */
int plot_canvas_create(plot_canvas *c, int width, int height);
void plot_canvas_destroy(plot_canvas *c);
/** Text with its top-left corner at (x, y), each font pixel scale x scale. */
void plot_text(plot_canvas *c, int x, int y, int scale, const uint8_t rgb[3], const char *s);
/** Draw one panel into the rectangle (x0, y0, w, h) of c. @return 0, or -1
 *  (bad arguments, no point to draw, or a rectangle too small) */
int plot_draw(plot_canvas *c, int x0, int y0, int w, int h, const plot_axes *a);
/** plot_draw with styles NULL (series i: colour and marker i, solid), or
 *  [a->n_series] one per series: e.g. a series' companion (its average)
 *  dashed in its colour. @return as plot_draw (also -1 for a colour < 0) */
int plot_draw_styled(plot_canvas *c, int x0, int y0, int w, int h, const plot_axes *a,
                     const plot_style *styles);
/** @return as image_png_write (png.h) */
int plot_save_png(const plot_canvas *c, const char *path);

#endif
