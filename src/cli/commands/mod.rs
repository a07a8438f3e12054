pub mod append;
pub mod checkpoint;
pub mod demo;
pub mod export;
pub mod import;
pub mod inspect;
pub mod log;
pub mod verify;
