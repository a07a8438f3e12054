pub mod append;
pub mod demo;
pub mod log;
pub mod verify;
pub mod hook;
pub mod install;
