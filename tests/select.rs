//! Device selection (`device::select`, `Queue::with_device`, `CLREDUCE_DEVICE`): by index, by
//! name under the documented rules (design/decisions.md section 31: an exact name, then a part
//! of a platform name, of a device name, of "platform / name"; several matches at the rule
//! that decides are `Error::AmbiguousDevice`), unknown names listing the devices, the default
//! device, and the environment handed to child processes.

use crate::common;

use clreduce::caps::DeviceKind;
use clreduce::{devices, Device, Error, Queue};
use common::*;
use std::process::Command;

// ---- device selection ---------------------------------------------------------------------

#[test]
fn select_by_index() {
    let _sim = sim_serial();
    for (i, d) in devices().unwrap().iter().enumerate() {
        assert_eq!(d.index(), i);
        let s = clreduce::device::select(Some(&i.to_string())).unwrap();
        assert_eq!(s.index(), i);
        assert_eq!(s.label(), d.label());
        let q = Queue::with_device(&format!(" {i} ")).unwrap();
        assert_eq!(q.device().index(), i);
    }
}

/// The devices a name spec should pick, by the documented rules (device::select), written
/// out independently here: the first rule that matches any device decides.
fn expected_matches(spec: &str) -> (&'static str, Vec<usize>) {
    let all = devices().unwrap();
    let w = spec.trim().to_lowercase();
    type Rule<'a> = (&'static str, &'a dyn Fn(&Device) -> bool);
    let rules: [Rule; 4] = [
        ("exact name", &|d| {
            let (p, n) = (d.platform().to_lowercase(), d.name().to_lowercase());
            p == w || n == w || format!("{p} / {n}") == w
        }),
        ("platform name", &|d| {
            d.platform().to_lowercase().contains(&w)
        }),
        ("device name", &|d| d.name().to_lowercase().contains(&w)),
        ("platform / name", &|d| {
            d.label().to_lowercase().contains(&w)
        }),
    ];
    for (rule, hit) in rules {
        let m: Vec<usize> = all.iter().filter(|d| hit(d)).map(|d| d.index()).collect();
        if !m.is_empty() {
            return (rule, m);
        }
    }
    ("", Vec::new())
}

#[test]
fn select_by_name_case_insensitive() {
    let _sim = sim_serial();
    let all = devices().unwrap();
    for d in all {
        for needle in [
            d.name().to_uppercase(),
            d.platform().to_lowercase(),
            d.label(),
        ] {
            let (rule, want) = expected_matches(&needle);
            match clreduce::device::select(Some(&needle)) {
                Ok(s) => assert_eq!(vec![s.index()], want, "{needle} ({rule})"),
                Err(Error::AmbiguousDevice { rule: r, .. }) => {
                    assert!(want.len() > 1 && r == rule, "{needle}: {want:?} {r}")
                }
                Err(e) => panic!("{needle}: {e}"),
            }
        }
    }
    let mut any = false;
    for (needle, platform) in [
        ("portable computing", "Portable Computing Language"),
        ("oclgrind", "Oclgrind"),
        ("intel", "Intel(R) OpenCL"),
        ("nvidia", "NVIDIA"),
        ("pthread", "Portable Computing Language"),
    ] {
        if !all.iter().any(|d| d.platform().contains(platform)) {
            eprintln!("SKIP {needle} select by name: platform not present");
            continue;
        }
        match Queue::with_device(needle) {
            Ok(q) => {
                assert!(
                    q.device().platform().contains(platform),
                    "{needle}: {}",
                    q.device().label()
                );
                any = true;
            }
            // Two devices of one platform (two GPUs): the name alone cannot pick one.
            Err(Error::AmbiguousDevice { matches, .. }) => eprintln!(
                "SKIP {needle} select by name: {} devices of {platform}",
                matches.len()
            ),
            Err(e) => panic!("{needle}: {e}"),
        }
    }
    assert!(any);
}

/// Issue 21: on a machine with an Intel CPU, PoCL's device name contains "Intel(R) Xeon";
/// `intel` must still be Intel's runtime (its platform name), never PoCL by a silent first
/// match.
#[test]
fn intel_is_the_intel_platform_not_a_pocl_device_named_after_the_cpu() {
    let _sim = sim_serial();
    let all = devices().unwrap();
    let Some(intel) = all
        .iter()
        .find(|d| d.platform().contains("Intel(R) OpenCL"))
    else {
        eprintln!("SKIP intel by name: Intel's runtime not present");
        return;
    };
    if !all
        .iter()
        .any(|d| d.name().to_lowercase().contains("intel") && d.index() != intel.index())
    {
        eprintln!(
            "NOTE intel by name: no other device here has Intel in its name (checked anyway)"
        );
    }
    for spec in ["intel", "Intel", "INTEL(R) OPENCL"] {
        assert_eq!(
            clreduce::device::select(Some(spec)).unwrap().index(),
            intel.index(),
            "{spec}"
        );
    }
}

/// A name that matches several devices at the deciding rule is refused with every match
/// listed; nothing is picked silently.
#[test]
fn ambiguous_name_lists_the_matching_devices() {
    let _sim = sim_serial();
    let all = devices().unwrap();
    let mut seen = 0;
    let letters = "abcdefghijklmnopqrstuvwxyz()";
    for spec in letters.chars().map(String::from) {
        let (rule, want) = expected_matches(&spec);
        if want.len() < 2 {
            continue;
        }
        seen += 1;
        match clreduce::device::select(Some(&spec)) {
            Err(e @ Error::AmbiguousDevice { .. }) => {
                let msg = e.to_string();
                let Error::AmbiguousDevice {
                    wanted,
                    rule: r,
                    matches,
                } = e
                else {
                    unreachable!()
                };
                assert_eq!((wanted.as_str(), r), (spec.as_str(), rule));
                let listed: Vec<String> = want
                    .iter()
                    .map(|&i| format!("  {i}: {}", all[i].label()))
                    .collect();
                assert_eq!(matches, listed, "{spec}");
                assert!(
                    msg.contains("is ambiguous") && msg.contains(&listed[1]),
                    "{msg}"
                );
            }
            other => panic!("{spec}: {other:?}"),
        }
        assert!(matches!(
            Queue::with_device(&spec),
            Err(Error::AmbiguousDevice { .. })
        ));
    }
    if seen == 0 {
        eprintln!("SKIP ambiguous names: no letter matches two devices here");
    }
}

#[test]
fn unknown_device_lists_devices() {
    let _sim = sim_serial();
    let all = devices().unwrap();
    for spec in ["no-such-device-xyz", "99", &all.len().to_string()] {
        match clreduce::device::select(Some(spec)) {
            Err(Error::DeviceNotFound { wanted, found }) => {
                assert_eq!(wanted, spec);
                assert_eq!(found.len(), all.len());
                for d in all {
                    assert!(
                        found.iter().any(|f| f.contains(&d.label())),
                        "{found:?} lacks {}",
                        d.label()
                    );
                }
                let msg = Error::DeviceNotFound {
                    wanted: wanted.clone(),
                    found: found.clone(),
                }
                .to_string();
                assert!(msg.contains(spec) && msg.contains(&all[0].label()), "{msg}");
            }
            other => panic!("{spec}: {other:?}"),
        }
        assert!(matches!(
            Queue::with_device(spec),
            Err(Error::DeviceNotFound { .. })
        ));
    }
}

/// The default device (no spec, no `CLREDUCE_DEVICE`): the first GPU that is not a simulator,
/// else the first such CPU, else the first device.
fn expected_default() -> Device {
    let all = devices().unwrap();
    let kind = |d: &Device| d.caps().unwrap().kind;
    all.iter()
        .find(|d| kind(d) == DeviceKind::Gpu && !d.is_simulator())
        .or_else(|| {
            all.iter()
                .find(|d| kind(d) == DeviceKind::Cpu && !d.is_simulator())
        })
        .unwrap_or(&all[0])
        .clone()
}

#[test]
fn default_device_in_process() {
    if std::env::var("CLREDUCE_DEVICE").is_ok_and(|s| !s.is_empty()) {
        eprintln!("SKIP default device in process: CLREDUCE_DEVICE is set");
        return;
    }
    let d = clreduce::device::select(None).unwrap();
    assert_eq!(d.index(), expected_default().index());
}

/// What `device::env_for_children` hands back is the ICD loader's list as it was before
/// enumeration, only when the loader changed it (decision 28): then the variable now in the
/// environment is what the loader cut it to, a leading part of the original.
#[test]
fn env_for_children_only_repairs_what_the_loader_changed() {
    devices().unwrap();
    let now = std::env::var_os("OCL_ICD_FILENAMES");
    for (k, v) in clreduce::device::env_for_children() {
        assert_eq!(k, "OCL_ICD_FILENAMES");
        let now = now.clone().unwrap_or_default();
        assert_ne!(v, now, "handed back although unchanged");
        let (v, now) = (v.to_string_lossy(), now.to_string_lossy());
        assert!(
            v.starts_with(&*now),
            "the loader's value {now:?} is not a leading part of the original {v:?}"
        );
    }
}

/// `CLREDUCE_DEVICE`, tested in child processes (the CLI) so this process's environment is
/// never mutated.
#[test]
fn clreduce_device_env_in_child_process() {
    let exe = std::env::var("CLREDUCE_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_clreduce").to_string());
    let explain = |env: Option<&str>| {
        let mut cmd = Command::new(&exe);
        cmd.args(["explain", "--n", "1000", "--type", "i32"]);
        cmd.envs(clreduce::device::env_for_children());
        cmd.env_remove("CLREDUCE_MASK")
            .env_remove("CLREDUCE_STRATEGY");
        match env {
            Some(v) => cmd.env("CLREDUCE_DEVICE", v),
            None => cmd.env_remove("CLREDUCE_DEVICE"),
        };
        cmd.output().expect("run clreduce")
    };
    let plan_device = |out: &std::process::Output| -> String {
        let s = String::from_utf8_lossy(&out.stdout);
        s.lines()
            .find_map(|l| l.strip_prefix("plan on "))
            .map(|l| l.split(':').next().unwrap_or("").to_string())
            .unwrap_or_else(|| {
                panic!(
                    "no plan line in {s:?} / {}",
                    String::from_utf8_lossy(&out.stderr)
                )
            })
    };
    for d in devices().unwrap() {
        let caps_label = d.caps().unwrap().label();
        for spec in [d.index().to_string(), d.name().to_string()] {
            if let Err(Error::AmbiguousDevice { .. }) = clreduce::device::select(Some(&spec)) {
                // Two devices of the same name: the CLI refuses the name too.
                assert_eq!(explain(Some(&spec)).status.code(), Some(2), "{spec}");
                continue;
            }
            let out = explain(Some(&spec));
            assert!(out.status.success(), "{spec}: {:?}", out);
            let first = clreduce::device::select(Some(&spec)).unwrap();
            assert_eq!(
                plan_device(&out),
                first.caps().unwrap().label(),
                "CLREDUCE_DEVICE={spec}"
            );
            if spec == d.index().to_string() {
                assert_eq!(plan_device(&out), caps_label);
            }
        }
    }
    let out = explain(None);
    assert!(out.status.success());
    assert_eq!(
        plan_device(&out),
        expected_default().caps().unwrap().label()
    );
    let out = explain(Some("no-such-device-xyz"));
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no OpenCL device matches"), "{err}");
    for d in devices().unwrap() {
        assert!(err.contains(&d.label()), "{err} lacks {}", d.label());
    }
}
