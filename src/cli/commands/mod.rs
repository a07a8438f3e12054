pub mod append;
pub mod demo;
pub mod log;
pub mod verify;
