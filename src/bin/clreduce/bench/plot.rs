//! `clreduce bench --svg`: GB/s against n (log2) per strategy, one panel per device and case,
//! drawn with plotters' SVG backend; the auto plan's line is the thick one.

use super::results::{Point, Report};
use std::path::Path;

/// Writes the plot of `r` to `path`.
pub fn plot(path: &Path, r: &Report) -> std::result::Result<(), String> {
    use plotters::prelude::*;
    let mut panels: Vec<(String, String)> = Vec::new();
    for p in &r.points {
        let key = (p.device.clone(), p.case.clone());
        if !panels.contains(&key) {
            panels.push(key);
        }
    }
    if panels.is_empty() {
        return Err("no points to plot".into());
    }
    let cols = 2usize.min(panels.len());
    let rows = panels.len().div_ceil(cols);
    let root = SVGBackend::new(path, (700 * cols as u32, 420 * rows as u32)).into_drawing_area();
    let e = |x: &dyn std::fmt::Display| x.to_string();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let areas = root.split_evenly((rows, cols));
    for ((dev, case), area) in panels.iter().zip(areas.iter()) {
        let pts: Vec<&Point> = r
            .points
            .iter()
            .filter(|p| &p.device == dev && &p.case == case)
            .collect();
        let xs: Vec<f64> = pts.iter().map(|p| (p.n as f64).log2()).collect();
        let (mut x0, mut x1) = (
            xs.iter().cloned().fold(f64::INFINITY, f64::min),
            xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
        );
        if x1 - x0 < 1.0 {
            x0 -= 0.5;
            x1 += 0.5;
        }
        let ymax = pts.iter().map(|p| p.gbps).fold(0.0, f64::max) * 1.1 + 1e-3;
        let mut chart = ChartBuilder::on(area)
            .caption(format!("{case} on {dev}"), ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, 0f64..ymax)
            .map_err(|x| e(&x))?;
        chart
            .configure_mesh()
            .x_desc("n (elements)")
            .y_desc("GB/s (input bytes / device time)")
            .x_labels(((x1 - x0) as usize + 1).min(20))
            .x_label_formatter(&|x| format!("2^{}", x.round() as i64))
            .draw()
            .map_err(|x| e(&x))?;
        let mut strategies: Vec<&str> = Vec::new();
        for p in &pts {
            if !strategies.contains(&p.strategy.as_str()) {
                strategies.push(&p.strategy);
            }
        }
        for (k, s) in strategies.iter().enumerate() {
            let color = Palette99::pick(k).to_rgba();
            let mut line: Vec<(f64, f64)> = pts
                .iter()
                .filter(|p| p.strategy == *s)
                .map(|p| ((p.n as f64).log2(), p.gbps))
                .collect();
            line.sort_by(|a, b| a.0.total_cmp(&b.0));
            let width = if *s == "auto" { 3 } else { 1 };
            chart
                .draw_series(LineSeries::new(line.clone(), color.stroke_width(width)))
                .map_err(|x| e(&x))?
                .label(s.to_string())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(width))
                });
            chart
                .draw_series(
                    line.iter()
                        .map(|&(x, y)| Circle::new((x, y), 2, color.filled())),
                )
                .map_err(|x| e(&x))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .label_font(("sans-serif", 11))
            .draw()
            .map_err(|x| e(&x))?;
    }
    root.present().map_err(|x| e(&x))?;
    Ok(())
}
