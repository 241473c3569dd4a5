//! Compiles cayley.proto with protox (a protobuf compiler written in Rust),
//! so building needs no system `protoc`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "cayley.proto";
    println!("cargo:rerun-if-changed={}", proto);
    let descriptors = protox::compile([proto], ["."])?;
    tonic_prost_build::configure().compile_fds(descriptors)?;
    Ok(())
}
